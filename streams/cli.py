"""Command-line entry points of the streams package (merged into ``fleetpulse``)."""

from __future__ import annotations

import typer

app = typer.Typer()
