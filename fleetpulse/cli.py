"""The ``fleetpulse`` command: one entry point, a sub-command per part.

Each part owns its commands in its own ``cli.py`` (a Typer app), listed in ``fleetpulse.commands``
and loaded when one runs. The settings object is built once here and handed down
through ``ctx.obj``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from fleetpulse.commands import LazyParts
from ground.errors import FleetpulseError
from ground.parent_death import die_with_parent

# The parts' commands are listed by ``fleetpulse.commands`` and imported only when one runs; the
# settings (pydantic) and the log filters load in the root callback, which a listing never runs:
# ``fleetpulse --help`` stays under half a second of CPU (tests/fleetpulse/test_commands.py).
app = typer.Typer(
    name="fleetpulse",
    help="Event-sourced telemetry and failure analytics for large GPU fleets.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    cls=LazyParts,
)

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
    from ground.quiet_logs import install as quiet_harmless_logs
    from ground.repeated_log_lines import install as limit_repeated_logs
    from ground.settings import Settings

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
