"""Lake upkeep with Delta's own operations: compaction is ``optimize.compact``, clean-up is ``vacuum``.

Both commit like any writer, so they may run beside the archiver: its commits are blind appends
and do not conflict with a compaction. Compaction merges the small files of closed date partitions
(older than ``lake.compact_after_days``) unless told to take every date; it does not drop repeated
event ids (readers that count events use ``analytics.jobs.source.unique_events``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from typing import NamedTuple

from deltalake.exceptions import DeltaError

from analytics.errors import LakeError
from analytics.lake.layout import archiver_tables
from analytics.tables import TABLES, table_of
from ground.delta import DATE, DeltaTables
from ground.settings.lake import LakeSettings


class CompactionResult(NamedTuple):
    table: str
    files_removed: int
    files_added: int
    partitions: int


class VacuumResult(NamedTuple):
    table: str
    files_deleted: int


def lake_tables(delta: DeltaTables, tables: Iterable[str] | None = None) -> list[str]:
    """The existing tables among ``tables`` (default: every data table and the archiver's own)."""
    names = [table_of(t) for t in tables] if tables else [*sorted(TABLES), *archiver_tables(sorted(TABLES))]
    return [t for t in names if delta.exists(t)]


def closed_before(today: dt.date, after_days: int) -> str:
    """The first open date: partitions before it are closed (more than ``after_days`` before today)."""
    return (today - dt.timedelta(days=after_days)).isoformat()


def compact(
    delta: DeltaTables,
    settings: LakeSettings,
    *,
    tables: Iterable[str] | None = None,
    all_dates: bool = False,
    today: dt.date | None = None,
    target_size: int | None = None,
    on_table: Callable[[CompactionResult], None] | None = None,
) -> list[CompactionResult]:
    """``optimize.compact`` every table (closed date partitions only, unless ``all_dates``)."""
    first_open = closed_before(today or dt.datetime.now(dt.UTC).date(), settings.compact_after_days)
    out = []
    for name in lake_tables(delta, tables):
        table = delta.open(name)
        assert table is not None
        dated = DATE in table.metadata().partition_columns
        filters = [(DATE, "<", first_open)] if dated and not all_dates else None
        try:
            metrics = table.optimize.compact(partition_filters=filters, target_size=target_size)  # type: ignore[arg-type]
        except (DeltaError, OSError) as exc:
            raise LakeError(f"compaction of {name} failed: {exc}", delta.uri(name)) from exc
        result = CompactionResult(
            name,
            int(metrics["numFilesRemoved"]),
            int(metrics["numFilesAdded"]),
            int(metrics["partitionsOptimized"]),
        )
        if result.files_removed:
            out.append(result)
            if on_table is not None:
                on_table(result)
    return out


def vacuum(
    delta: DeltaTables,
    retention_hours: int,
    *,
    tables: Iterable[str] | None = None,
    dry_run: bool = False,
) -> list[VacuumResult]:
    """Delete files no version younger than ``retention_hours`` reads (what compaction replaced)."""
    out = []
    for name in lake_tables(delta, tables):
        table = delta.open(name)
        assert table is not None
        try:
            deleted = table.vacuum(
                retention_hours=retention_hours, dry_run=dry_run, enforce_retention_duration=False
            )
        except (DeltaError, OSError) as exc:
            raise LakeError(f"vacuum of {name} failed: {exc}", delta.uri(name)) from exc
        out.append(VacuumResult(name, len(deleted)))
    return out
