"""Command-line entry points of ``streams.webhooks`` (merged into ``fleetpulse``)."""

from __future__ import annotations

import typer

app = typer.Typer()
