"""``fleetpulse-agent``: the host agent alone, the entry point of its own light install (packaging/agent).

The same command as ``fleetpulse agent`` without the rest of the ``fleetpulse`` shell, so a GPU node
needs neither the detectors' nor the analytics' libraries. Settings come from FLEETPULSE_CONFIG (or
./fleetpulse.toml) and FLEETPULSE_* variables, as for ``fleetpulse``.
"""

from __future__ import annotations

import logging

import typer
from rich.console import Console
from rich.markup import escape

from ground.errors import FleetpulseError
from ground.parent_death import die_with_parent
from producers.agent.cli import agent

app = typer.Typer(name="fleetpulse-agent", add_completion=False, pretty_exceptions_enable=False)
app.command(help=agent.__doc__)(agent)


def main() -> None:
    """Console entry point: a fleetpulse error is one line and exit code 2, as for ``fleetpulse``."""
    die_with_parent()
    logging.basicConfig(
        level=logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        app()
    except FleetpulseError as exc:
        Console(stderr=True, soft_wrap=True).print(f"[bold red]error:[/] {escape(str(exc))}")
        raise SystemExit(2) from None
