"""``fleetpulse topics``: create and list the fleetpulse topics."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ground.cli_context import settings_of
from ground.kafka import admin
from ground.tables import FormatOpt, OutputFormat, messages, show

if TYPE_CHECKING:
    from ground.settings import Settings

app = typer.Typer(
    no_args_is_help=True,
    help="Create the topics declared in ground.kafka.topics (safe to repeat) and list the cluster's topics.",
)
console = Console(highlight=False)


def _settings(ctx: typer.Context) -> Settings:
    return settings_of(ctx)


@app.command()
def create(
    ctx: typer.Context,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for the cluster.")] = 30.0,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Create every fleetpulse topic that does not exist yet; existing topics are left unchanged."""
    settings = _settings(ctx)
    specs = settings.topics.all()
    say = messages(fmt)
    with say.status(f"creating {len(specs)} topics on {settings.bootstrap_servers}…"):
        report = admin.ensure_topics(settings, specs, timeout_s=timeout)
    table = Table(title=f"topics on {escape(settings.bootstrap_servers)}")
    for column in ("topic", "partitions", "cleanup", "retention", "state"):
        table.add_column(column)
    for spec in specs:
        state = "[green]created[/]" if spec.name in report.created else "exists (unchanged)"
        retention = "forever" if spec.retention_ms < 0 else _duration(spec.retention_ms)
        if spec.cleanup_policy == "compact":
            retention = "-"
        table.add_row(spec.name, str(spec.partitions), spec.cleanup_policy, retention, state)
    show(fmt, table, console=console)
    say.print(f"{len(report.created)} created, {len(report.existing)} already existed.")


@app.command("list")
def list_(
    ctx: typer.Context,
    internal: Annotated[
        bool, typer.Option("--internal", help="Include internal topics (__consumer_offsets…).")
    ] = False,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for the cluster.")] = 10.0,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """List the topics on the cluster with their partition counts."""
    settings = _settings(ctx)
    partitions = admin.topic_partitions(settings, timeout_s=timeout)
    declared = {spec.name: spec for spec in settings.topics.all()}
    table = Table(title=f"topics on {escape(settings.bootstrap_servers)}")
    for column in ("topic", "partitions", "fleetpulse"):
        table.add_column(column)
    for name in sorted(partitions):
        if name.startswith("__") and not internal:
            continue
        spec = declared.get(name)
        note = ""
        if spec is not None:
            note = (
                "declared"
                if spec.partitions == partitions[name]
                else f"declared with {spec.partitions} partitions"
            )
        table.add_row(name, str(partitions[name]), note)
    show(fmt, table, console=console)
    missing = sorted(set(declared) - set(partitions))
    if missing:
        messages(fmt).print(f"[yellow]missing:[/] {', '.join(missing)} (run `fleetpulse topics create`)")


def _duration(ms: int) -> str:
    days, rest = divmod(ms, 24 * 3600 * 1000)
    return f"{days} d" if not rest else f"{ms / 3600_000:g} h"
