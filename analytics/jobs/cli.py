"""Command-line entry points of ``analytics.jobs`` (merged into ``fleetpulse``)."""

from __future__ import annotations

import typer

app = typer.Typer()
