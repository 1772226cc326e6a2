"""``fleetpulse faults``: run the fault-injection scenarios and write docs/RELIABILITY.md."""

from __future__ import annotations

import typer

app = typer.Typer(no_args_is_help=True)
