"""``fleetpulse topics``: create and list the fleetpulse topics."""

from __future__ import annotations

import typer

app = typer.Typer(no_args_is_help=True)
