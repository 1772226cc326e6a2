"""``fleetpulse demo``: the whole pipeline on a real local broker, end to end."""

from __future__ import annotations

import typer

app = typer.Typer()
