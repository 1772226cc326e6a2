"""Command-line entry points of the producers package (merged into ``fleetpulse``)."""

from __future__ import annotations

import typer

app = typer.Typer()
