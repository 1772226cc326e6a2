"""``fleetpulse archive``: the fleet topics into the Delta lake, exactly once, as one or several members.

Heavy imports (pyarrow, polars, Kafka) stay inside the command so ``fleetpulse --help`` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from analytics.cli import LakeOpt, console, lake_settings
from ground.stop_signals import stop_on_signals

if TYPE_CHECKING:
    from analytics.lake.publish import PublishedBatch

app = typer.Typer()


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
    member: Annotated[
        str | None,
        typer.Option(
            "--member",
            metavar="I/N",
            help="Archive one share of the partitions, as member I (0-based) of N archivers "
            "(lake.member, lake.members); every member of 0 .. N-1 must run.",
        ),
    ] = None,
    resplit: Annotated[
        bool,
        typer.Option(
            "--resplit",
            help="Start a new split (another N than the lake recorded): every member of "
            "the old split has stopped; the others of the new one need no flag.",
        ),
    ] = False,
    metrics_port: Annotated[
        int | None,
        typer.Option(help="Serve Prometheus metrics on this port (default lake.metrics_port; 0: off)."),
    ] = None,
    metrics_host: Annotated[
        str, typer.Option(help="Address the metrics port binds (loopback by default).")
    ] = "127.0.0.1",
) -> None:
    """Archive the fleet topics into the Delta lake, exactly once; safe to kill and restart at any time."""
    from analytics.lake.archiver import Archiver, ArchiveStats, archived_topics
    from analytics.lake.metrics import ArchiverMetrics

    settings = lake_settings(ctx, lake)
    if member is not None:
        settings = settings.with_section("lake", **_member(member))
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

    metrics = ArchiverMetrics()
    if port := settings.lake.metrics_port if metrics_port is None else metrics_port:
        from prometheus_client import start_http_server

        start_http_server(port, addr=metrics_host, registry=metrics.registry)

    def on_batch(done: PublishedBatch, s: ArchiveStats) -> None:
        metrics.observe(done, s)
        progress.update(line(s))

    with stop_on_signals() as stop, console.status("waiting for the first batch…") as progress:
        stats = Archiver(settings, resplit=resplit).run(
            until_idle=until_idle, max_seconds=max_seconds, stop=stop, on_batch=on_batch
        )
    if stats.replayed_rows:
        console.print(f"resumed after an interruption: {stats.replayed_rows:,} rows were already in the lake")
    console.print(f"done in {stats.elapsed_s:.1f} s: {line(stats)}")
    if stats.quarantined_rows:
        console.print("[yellow]some batches failed their quality gate:[/] see `fleetpulse lake quarantine`")


def _member(text: str) -> dict[str, int]:
    index, sep, count = text.partition("/")
    if not sep or not index.isdigit() or not count.isdigit() or int(index) >= int(count):
        raise typer.BadParameter(f"{text!r} is not I/N with 0 <= I < N (e.g. 0/2)", param_hint="--member")
    return {"member": int(index), "members": int(count)}
