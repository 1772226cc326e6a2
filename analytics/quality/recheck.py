"""Re-validate a whole lake against the current suites (``fleetpulse lake validate``), one date partition at a time.

Read-only: it reports, it does not quarantine. It also counts event_ids repeated across files,
which a single-batch gate cannot see.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from typing import NamedTuple

import polars as pl

from analytics.lake.catalog import date_of_path
from analytics.lake.layout import table_of
from analytics.lake.reader import Lake
from analytics.quality.gate import QualityGate


class RecheckRow(NamedTuple):
    table: str
    date: str  # "*" for whole-table checks
    files: int
    rows: int
    success: bool
    failed: tuple[str, ...]


def recheck(
    lake: Lake,
    gate: QualityGate,
    now: dt.datetime,
    *,
    tables: Iterable[str] | None = None,
    check_known_hosts: bool = True,
    on_row: Callable[[RecheckRow], None] | None = None,
) -> list[RecheckRow]:
    """Validate every published date partition of the tables (all present ones by default)."""
    names = [table_of(t) for t in tables] if tables else lake.tables()
    hosts = lake.known_hosts() if check_known_hosts else None
    if hosts is not None and not hosts:
        hosts = None  # no inventory archived: the known-host check cannot be judged
    rows: list[RecheckRow] = []

    def emit(row: RecheckRow) -> None:
        rows.append(row)
        if on_row is not None:
            on_row(row)

    for table in names:
        files = lake.files(table)
        by_date: dict[str, int] = {}
        for rel in files:
            by_date[date_of_path(rel)] = by_date.get(date_of_path(rel), 0) + 1
        scan = lake.scan(table)
        for date, count in sorted(by_date.items()):
            day = dt.date.fromisoformat(date)
            frame = scan.filter(pl.col("date") == day).drop("date").collect()
            outcome = gate.validate(table, frame, now, hosts)
            emit(RecheckRow(table, date, count, frame.height, outcome.success, tuple(outcome.failed_names)))
        if files:
            dupes = scan.group_by("event_id").len().filter(pl.col("len") > 1).collect()
            repeated = int(dupes.get_column("len").sum() - dupes.height) if dupes.height else 0
            failed = (
                (f"{dupes.height} event_ids appear more than once ({repeated} extra rows)",)
                if repeated
                else ()
            )
            total = int(scan.select(pl.len()).collect().item())
            emit(RecheckRow(table, "*", len(files), total, not repeated, failed))
    return rows
