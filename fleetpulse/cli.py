"""The ``fleetpulse`` command: one entry point, a sub-command per part.

Each part owns its commands in its own ``cli.py`` (a Typer app merged here), so adding a
command never touches this file. The settings object is built once here and handed down
through ``ctx.obj``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

import analytics.cli
import analytics.jobs.cli
import fleetpulse.backtest.cli
import fleetpulse.broker.cli
import fleetpulse.demo
import fleetpulse.evaluation.cli
import fleetpulse.faults.cli
import fleetpulse.topics_cli
import producers.cli
import producers.importer.cli
import streams.cli
import streams.ops_cli
import streams.trains.cli
import streams.webhooks.cli
from ground.errors import FleetpulseError
from ground.launch import die_with_parent
from ground.settings import Settings
from streams.quiet_logs import install as quiet_harmless_logs
from streams.repeat_logs import install as limit_repeated_logs

app = typer.Typer(
    name="fleetpulse",
    help="Event-sourced telemetry and failure analytics for large GPU fleets.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(fleetpulse.broker.cli.app, name="broker", help="Run the local Apache Kafka broker.")
app.add_typer(fleetpulse.topics_cli.app, name="topics", help="Create and list fleetpulse topics.")
app.add_typer(fleetpulse.faults.cli.app, name="faults", help="Fault-injection scenarios (reliability).")
app.add_typer(
    streams.trains.cli.app,
    name="train",
    help="Change campaigns: roll a driver, firmware or kernel version through the fleet domain by domain.",
)
app.add_typer(
    streams.ops_cli.app, name="ops", help="Record operators' steps on hosts (out of service, repair, RMA)."
)
for part in (
    producers.cli.app,
    producers.importer.cli.app,
    streams.cli.app,
    streams.webhooks.cli.app,
    analytics.cli.app,
    analytics.jobs.cli.app,
    fleetpulse.demo.app,
    fleetpulse.evaluation.cli.app,
    fleetpulse.backtest.cli.app,
):
    app.add_typer(part)

err_console = Console(stderr=True, soft_wrap=True)  # an error stays one line, whatever the width


@app.callback()
def _root(
    ctx: typer.Context,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            "-c",
            help="TOML settings file, given before the command: fleetpulse --config FILE <command> "
            "(else FLEETPULSE_CONFIG, else ./fleetpulse.toml when present).",
        ),
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Debug logging.")] = False,
) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    quiet_harmless_logs()  # every part's known-harmless library warnings, not only the detectors'
    limit_repeated_logs()  # a broker outage's connection errors: one line per kind per 30 s, with a count
    ctx.obj = Settings.load(config)


def main() -> None:
    """Console entry point: fleetpulse errors become one clear line and exit code 2."""
    die_with_parent()
    try:
        app()
    except FleetpulseError as exc:
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}")  # paths and host ids may hold [/]
        raise SystemExit(2) from None
