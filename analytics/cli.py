"""Command-line entry points of the analytics lake (merged into ``fleetpulse``): ``lake …`` and the options
every lake command shares (``archive`` is in ``analytics.archive_cli``).

Heavy imports (pyarrow, polars, great-expectations, Kafka) stay inside the commands so
``fleetpulse --help`` stays fast.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ground.cli_context import settings_of
from ground.tables import FormatOpt, OutputFormat, Sheet, messages, show

if TYPE_CHECKING:
    from analytics.lake.reader import Lake
    from ground.settings import Settings

app = typer.Typer()
lake_app = typer.Typer(
    no_args_is_help=True,
    help="Inspect and maintain the Delta lake: status, compaction, vacuum, quality re-checks, quarantine.",
)
app.add_typer(lake_app, name="lake")
console = Console(highlight=False)

# A str, not a Path: Path("s3://bucket/lake") would collapse the "//" and lose the URI.
LakeOpt = Annotated[
    str | None,
    typer.Option(
        "--lake",
        help="Lake root: a local folder or a URI such as s3://bucket/lake (default: settings lake.path).",
    ),
]
TablesOpt = Annotated[
    list[str] | None, typer.Option("--table", "-t", help="Only this table (repeatable), e.g. host_sampled.")
]


def lake_settings(ctx: typer.Context, lake: str | None) -> Settings:
    """The settings with ``--lake`` as ``lake.path``, passed on as given (a folder or a URI)."""

    settings = settings_of(ctx)
    if lake is None:
        return settings
    return settings.model_copy(update={"lake": settings.lake.model_copy(update={"path": lake})})


def _lake(settings: Settings) -> Lake:
    from analytics.lake.reader import open_lake

    return open_lake(settings.lake.path, settings.lake.storage_options)


@lake_app.command()
def status(ctx: typer.Context, lake: LakeOpt = None, fmt: FormatOpt = OutputFormat.table) -> None:
    """Tables with their Delta version, files and rows; committed offsets; quarantine and rejected records."""
    import polars as pl

    say = messages(fmt)

    settings = lake_settings(ctx, lake)
    lk = _lake(settings)
    table = Table(title=f"lake {escape(settings.lake.path)}")
    for column in ("table", "version", "files", "rows", "dates"):
        table.add_column(column)
    for name in lk.tables():
        summary = lk.scan(name).select(
            pl.len(), pl.col("date").min().alias("lo"), pl.col("date").max().alias("hi")
        )
        rows, lo, hi = summary.collect().row(0)
        dates = f"{lo} … {hi}" if rows else "-"
        table.add_row(name, str(lk.version(name)), str(len(lk.files(name))), f"{rows:,}", dates)
    offsets = Table(title="committed offsets (next offset to archive)")
    for column in ("archiver group", "topic", "partition", "next offset"):
        offsets.add_column(column)
    frontier = lk.frontier()
    for (group, tp), next_offset in sorted(frontier.items()):
        offsets.add_row(escape(group), escape(tp.topic), str(tp.partition), f"{next_offset:,}")
    entries = lk.quarantine()
    rejected = lk.rejected().select(pl.len()).collect().item()
    held = Sheet.of(
        "quarantine",
        ["entries", "rows", "rejected"],
        [[len(entries), sum(e.rows for e in entries), rejected]],
    )
    if fmt is not OutputFormat.table:
        show(fmt, table, offsets, held)
        return
    show(fmt, table, *([offsets] if frontier else []), console=console)
    if not frontier:
        say.print("no committed offsets: nothing here was written by the archiver")
    say.print(f"quarantine: {len(entries)} entries, {held.rows[0][1]:,} rows; rejected: {rejected:,}")


@lake_app.command()
def quarantine(ctx: typer.Context, lake: LakeOpt = None, fmt: FormatOpt = OutputFormat.table) -> None:
    """List quarantined batches and the expectations they failed."""
    settings = lake_settings(ctx, lake)
    entries = _lake(settings).quarantine()
    if not entries and fmt is OutputFormat.table:
        console.print("quarantine is empty")
        return
    table = Table(title="quarantined batches")
    for column in ("table", "source", "rows", "when", "failed expectations"):
        table.add_column(column)
    for e in entries:
        source = f"{e.topic}[{e.partition}] {e.first_offset}-{e.last_offset}"
        table.add_row(
            e.table, escape(source), str(e.rows), e.quarantined_at, escape("\n".join(e.failed_expectations))
        )
    show(fmt, table, console=console)


@lake_app.command()
def compact(
    ctx: typer.Context,
    lake: LakeOpt = None,
    tables: TablesOpt = None,
    all_dates: Annotated[
        bool, typer.Option("--all-dates", help="Also compact open partitions (today and recent days).")
    ] = False,
    target_size: Annotated[
        int | None,
        typer.Option("--target-size", min=1, help="Target file size in bytes (delta-rs default: 100 MiB)."),
    ] = None,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Merge small files with Delta's optimize.compact (closed date partitions unless --all-dates)."""
    from analytics.lake.maintenance import compact as run_compaction

    settings = lake_settings(ctx, lake)
    say = messages(fmt)
    with say.status("compacting…") as status:
        results = run_compaction(
            _lake(settings).delta,
            settings.lake,
            tables=tables,
            all_dates=all_dates,
            target_size=target_size,
            on_table=lambda r: status.update(
                f"compacted {r.table}: {r.files_removed} files → {r.files_added}"
            ),
        )
    if not results and fmt is OutputFormat.table:
        console.print("nothing to compact")
        return
    table = Table(title="compaction")
    for column in ("table", "files merged", "files written", "partitions"):
        table.add_column(column)
    for r in results:
        table.add_row(escape(r.table), str(r.files_removed), str(r.files_added), str(r.partitions))
    show(fmt, table, console=console)
    say.print(
        "the merged files stay readable by older versions until `fleetpulse lake vacuum` "
        f"(retention {settings.lake.vacuum_retention_hours} h) deletes them"
    )


@lake_app.command()
def vacuum(
    ctx: typer.Context,
    lake: LakeOpt = None,
    tables: TablesOpt = None,
    retention_hours: Annotated[
        int | None, typer.Option("--retention-hours", min=0, help="Default: lake.vacuum_retention_hours.")
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List what would be deleted.")] = False,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Delete files that no table version younger than the retention reads (Delta's vacuum)."""
    from analytics.lake.maintenance import vacuum as run_vacuum

    settings = lake_settings(ctx, lake)
    hours = settings.lake.vacuum_retention_hours if retention_hours is None else retention_hours
    results = run_vacuum(_lake(settings).delta, hours, tables=tables, dry_run=dry_run)
    verb = "would delete" if dry_run else "deleted"
    if fmt is OutputFormat.table:
        for r in results:
            if r.files_deleted:
                console.print(f"{escape(r.table)}: {verb} {r.files_deleted} files")
    else:  # every table, with or without files to delete, as rows a script can read
        table = Table(title="vacuum")
        for column in ("table", f"files {'to delete' if dry_run else 'deleted'}"):
            table.add_column(column)
        for r in results:
            table.add_row(escape(r.table), str(r.files_deleted))
        show(fmt, table, console=console)
    messages(fmt).print(
        f"{verb} {sum(r.files_deleted for r in results)} files older than {hours} h in {len(results)} tables"
    )


@lake_app.command()
def validate(
    ctx: typer.Context,
    lake: LakeOpt = None,
    tables: TablesOpt = None,
    now: Annotated[
        str | None,
        typer.Option("--now", help="ISO time that bounds event times (default: the current time)."),
    ] = None,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Re-check every published partition against the current suites; exit code 1 if any fails."""
    from analytics.quality.gate import QualityGate
    from analytics.quality.recheck import recheck

    settings = lake_settings(ctx, lake)
    when = dt.datetime.fromisoformat(now) if now else dt.datetime.now(dt.UTC)
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    gate = QualityGate(future_tolerance_s=settings.lake.quality.future_tolerance_s)
    with messages(fmt).status("validating…") as status:
        rows = recheck(
            _lake(settings),
            gate,
            when,
            tables=tables,
            check_known_hosts=settings.lake.quality.check_known_hosts,
            on_row=lambda r: status.update(f"validated {r.table} {r.date}"),
        )
    table = Table(title=f"quality of {escape(settings.lake.path)}")
    for column in ("table", "date", "files", "rows", "result", "failed expectations"):
        table.add_column(column)
    for r in rows:
        verdict = "[green]pass[/]" if r.success else "[red]FAIL[/]"
        table.add_row(r.table, r.date, str(r.files), f"{r.rows:,}", verdict, escape("\n".join(r.failed)))
    show(fmt, table, console=console)
    failed = [r for r in rows if not r.success]
    messages(fmt).print(f"{len(rows) - len(failed)} checks passed, {len(failed)} failed")
    if failed:
        raise typer.Exit(1)
