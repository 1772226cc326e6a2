"""``fleetpulse broker start|stop|status|logs``: run the local Kafka broker from the shell."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from fleetpulse.broker.logs import follow, tail
from fleetpulse.broker.process import LocalBroker
from ground.cli_context import settings_of
from ground.tables import FormatOpt, OutputFormat, show

if TYPE_CHECKING:
    from ground.settings import Settings

app = typer.Typer(
    no_args_is_help=True,
    help=(
        "Run a single-node Apache Kafka broker (KRaft) on this machine: Java 17+ runs it, Maven fetches "
        "it once into a cache. Data lives in broker.data_dir and survives stop/start."
    ),
)
console = Console(highlight=False)


def _settings(ctx: typer.Context) -> Settings:
    return settings_of(ctx)


def _external(settings: Settings, *, local: bool = False) -> bool:
    """True (and says so) when every part uses an external cluster and ``--local`` does not override it."""
    if settings.uses_local_broker or local:
        return False
    console.print(
        f"Using the external Kafka cluster at [bold]{escape(settings.bootstrap_servers)}[/] (from "
        "KAFKA_BOOTSTRAP_SERVERS or kafka.bootstrap_servers): no local broker is managed. Pass --local to "
        "manage the local one anyway, or unset it."
    )
    return True


LocalOption = Annotated[
    bool,
    typer.Option(
        "--local",
        help="Manage the local broker even when KAFKA_BOOTSTRAP_SERVERS points the parts at an external cluster.",
    ),
]


@app.command()
def start(ctx: typer.Context, local: LocalOption = False) -> None:
    """Start the broker in the background (fetches Kafka on first use); does nothing if it already runs."""
    settings = _settings(ctx)
    if _external(settings, local=local):
        return
    began = time.monotonic()
    with console.status(f"starting Kafka {settings.broker.kafka_version}…") as spinner:
        broker = LocalBroker(
            settings.broker, kafka=settings.kafka, reporter=lambda m: spinner.update(escape(m))
        )
        already = broker.pid() is not None
        status = broker.start()
    if already:
        console.print(f"Kafka already running at [bold]{status.bootstrap}[/] (pid {status.pid}).")
        return
    console.print(
        f"[green]Kafka {status.kafka_version} ready[/] at [bold]{status.bootstrap}[/] "
        f"in {time.monotonic() - began:.1f} s (pid {status.pid})\n"
        f"  data: {escape(str(status.data_dir))}\n  log:  {escape(str(status.log_file))}"
    )


@app.command()
def stop(ctx: typer.Context, local: LocalOption = False) -> None:
    """Stop the broker cleanly (SIGTERM, then SIGKILL after broker.stop_timeout_s); data is kept."""
    settings = _settings(ctx)
    if _external(settings, local=local):
        return
    broker = LocalBroker(settings.broker, kafka=settings.kafka)
    with console.status("stopping Kafka…"):
        was_running = broker.stop()
    console.print("[green]Kafka stopped.[/]" if was_running else "Kafka was not running.")


@app.command()
def status(ctx: typer.Context, local: LocalOption = False, fmt: FormatOpt = OutputFormat.table) -> None:
    """Show whether the broker runs and answers, where, and its files. Exit code 1 if it is not running.

    With an external cluster configured, whether that answers; ``--local``: the local broker's state anyway.
    """
    settings = _settings(ctx)
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column("field", style="bold")  # the names only --format json|csv shows
    table.add_column("value")
    if not settings.uses_local_broker and not local:
        from ground.kafka.admin import broker_answers

        answers = broker_answers(settings.bootstrap_servers, settings.kafka, timeout_s=5.0)
        table.add_row("cluster", f"external, {escape(settings.bootstrap_servers)}")
        table.add_row("answers", "[green]yes[/]" if answers else "[red]no[/]")
        show(fmt, table, console=console)
        raise typer.Exit(0 if answers else 1)
    state = LocalBroker(settings.broker, kafka=settings.kafka).status()
    if state.ready:
        verdict = "[green]running[/]"
    elif state.running:
        verdict = "[yellow]running, not answering yet[/]"
    else:
        verdict = "[red]stopped[/]"
    table.add_row("broker", f"{verdict} (Kafka {state.kafka_version})")
    table.add_row("pid", str(state.pid or "-"))
    table.add_row("bootstrap", state.bootstrap)
    table.add_row("data", escape(str(state.data_dir)))
    table.add_row("log", escape(str(state.log_file)))
    show(fmt, table, console=console)
    if not state.running:
        raise typer.Exit(1)


@app.command()
def logs(
    ctx: typer.Context,
    lines: Annotated[
        int, typer.Option("--lines", "-n", min=0, help="How many of the last lines to show.")
    ] = 40,
    follow_: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing new lines (Ctrl-C stops).")
    ] = False,
    local: LocalOption = False,
) -> None:
    """Print the end of the broker's log file."""
    settings = _settings(ctx)
    if _external(settings, local=local):
        return
    path = LocalBroker(settings.broker).log_path
    if not path.exists() and not follow_:
        console.print(
            f"No broker log yet at {escape(str(path))} (start the broker with `fleetpulse broker start`)."
        )
        raise typer.Exit(1)
    for line in tail(path, lines):
        console.out(line, highlight=False)
    if follow_:
        try:
            for line in follow(path):
                console.out(line, highlight=False)
        except KeyboardInterrupt:
            pass
