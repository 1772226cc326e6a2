"""Command-line entry points of the analytics lake (merged into ``fleetpulse``): ``archive`` and ``lake …``.

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

if TYPE_CHECKING:
    from ground.settings import Settings

app = typer.Typer()
lake_app = typer.Typer(
    no_args_is_help=True,
    help="Inspect and maintain the Parquet lake: status, compaction, quality re-checks, quarantine.",
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


def _settings(ctx: typer.Context, lake: str | None) -> Settings:
    """The settings with ``--lake`` as ``lake.path``, passed on as given (``LakeFS`` tells folders from URIs)."""

    settings = settings_of(ctx)
    if lake is None:
        return settings
    return settings.model_copy(update={"lake": settings.lake.model_copy(update={"path": lake})})


@app.command()
def archive(
    ctx: typer.Context,
    until_idle: Annotated[
        bool,
        typer.Option("--until-idle", help="Stop once every partition is caught up (after a final flush)."),
    ] = False,
    max_seconds: Annotated[
        float | None,
        typer.Option("--max-seconds", help="Stop after this many seconds (after a final flush)."),
    ] = None,
    lake: LakeOpt = None,
) -> None:
    """Archive the fleet topics into the Parquet lake, exactly once; safe to kill and restart at any time."""
    import signal
    import threading

    from analytics.lake.archiver import Archiver, ArchiveStats, archived_topics

    settings = _settings(ctx, lake)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    topics = ", ".join(archived_topics(settings))
    console.print(
        f"archiving {escape(topics)} from {escape(settings.bootstrap_servers)} into {escape(settings.lake.path)}"
    )

    def line(stats: ArchiveStats) -> str:
        lag = "?" if stats.lag is None else f"{stats.lag:,}"
        return (
            f"{stats.batches} batches, {stats.records:,} records: {stats.published_rows:,} published, "
            f"{stats.quarantined_rows:,} quarantined, {stats.rejected_rows:,} rejected; lag {lag}"
        )

    with console.status("waiting for the first batch…") as status:
        stats = Archiver(settings).run(
            until_idle=until_idle,
            max_seconds=max_seconds,
            stop=stop,
            on_batch=lambda _staged, s: status.update(line(s)),
        )
    if stats.reconciled:
        console.print(f"[yellow]reconciled:[/] removed {stats.reconciled} files left by an interrupted run")
    console.print(f"done in {stats.elapsed_s:.1f} s: {line(stats)}")
    if stats.quarantined_rows:
        console.print("[yellow]some batches failed their quality gate:[/] see `fleetpulse lake quarantine`")


@lake_app.command()
def status(ctx: typer.Context, lake: LakeOpt = None) -> None:
    """Tables and their published files, committed offsets, quarantine and rejected records."""
    from analytics.lake.reader import Lake

    settings = _settings(ctx, lake)
    lk = Lake(settings.lake.path)
    table = Table(title=f"lake {escape(settings.lake.path)}")
    for column in ("table", "files", "rows", "dates"):
        table.add_column(column)
    for name in lk.tables():
        files = lk.files(name)
        rows = sum(lk.fs.parquet_rows(f) for f in files)
        dates = sorted({f.split("/")[1].removeprefix("date=") for f in files})
        table.add_row(name, str(len(files)), f"{rows:,}", f"{dates[0]} … {dates[-1]}" if dates else "-")
    console.print(table)
    offsets = Table(title="committed offsets (next offset to archive)")
    offsets.add_column("topic")
    offsets.add_column("partition")
    offsets.add_column("next offset")
    frontier = lk.frontier()
    for tp, next_offset in sorted(frontier.items()):
        offsets.add_row(tp.topic, str(tp.partition), f"{next_offset:,}")
    if frontier:
        console.print(offsets)
    else:
        console.print("no committed offsets: nothing here was written by the archiver")
    entries = lk.quarantine()
    rejected = lk.rejected().select("offset").collect().height
    console.print(
        f"quarantine: {len(entries)} entries, {sum(e.rows for e in entries):,} rows; rejected: {rejected:,}"
    )


@lake_app.command()
def quarantine(ctx: typer.Context, lake: LakeOpt = None) -> None:
    """List quarantined batches and the expectations they failed."""
    from analytics.lake.quarantine import quarantine_entries

    settings = _settings(ctx, lake)
    entries = quarantine_entries(settings.lake.path)
    if not entries:
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
    console.print(table)


@lake_app.command()
def compact(
    ctx: typer.Context,
    lake: LakeOpt = None,
    tables: TablesOpt = None,
    all_dates: Annotated[
        bool, typer.Option("--all-dates", help="Also compact open partitions (today and recent days).")
    ] = False,
    max_rows: Annotated[
        int, typer.Option("--max-rows", min=2, help="Largest compacted file, rows.")
    ] = 1_000_000,
) -> None:
    """Merge the small files of closed date partitions into larger ones (atomic; duplicates dropped)."""
    from analytics.lake.compaction import compact as run_compaction
    from analytics.lake.fs import LakeFS
    from analytics.tables import table_of

    settings = _settings(ctx, lake)
    names = [table_of(t) for t in tables] if tables else None
    with console.status("compacting…") as status:
        results = run_compaction(
            LakeFS(settings.lake.path),
            settings.lake,
            tables=names,
            all_dates=all_dates,
            max_rows=max_rows,
            on_unit=lambda r: status.update(
                f"compacted {r.table} {r.date}: {r.sources} files → {r.rows:,} rows"
            ),
        )
    if not results:
        console.print("nothing to compact")
        return
    table = Table(title="compaction")
    for column in ("table", "date", "files merged", "rows", "duplicates dropped"):
        table.add_column(column)
    for r in results:
        table.add_row(r.table, r.date, str(r.sources), f"{r.rows:,}", str(r.duplicates_dropped))
    console.print(table)


@lake_app.command()
def validate(
    ctx: typer.Context,
    lake: LakeOpt = None,
    tables: TablesOpt = None,
    now: Annotated[
        str | None,
        typer.Option("--now", help="ISO time that bounds event times (default: the current time)."),
    ] = None,
) -> None:
    """Re-check every published partition against the current suites; exit code 1 if any fails."""
    from analytics.lake.reader import Lake
    from analytics.quality.gate import QualityGate
    from analytics.quality.recheck import recheck

    settings = _settings(ctx, lake)
    when = dt.datetime.fromisoformat(now) if now else dt.datetime.now(dt.UTC)
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    gate = QualityGate(future_tolerance_s=settings.lake.quality.future_tolerance_s)
    with console.status("validating…") as status:
        rows = recheck(
            Lake(settings.lake.path),
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
    console.print(table)
    failed = [r for r in rows if not r.success]
    console.print(f"{len(rows) - len(failed)} checks passed, {len(failed)} failed")
    if failed:
        raise typer.Exit(1)
