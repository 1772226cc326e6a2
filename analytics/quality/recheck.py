"""Re-validate a whole lake against the current suites (``fleetpulse lake validate``), per date partition.

Read-only: it reports, it does not quarantine. It also counts event_ids repeated across files,
which a single-batch gate cannot see.

Every expectation in the suites holds for a set of rows only if it holds for each subset (row-wise
checks, uniqueness, the column set; none uses ``mostly``), so consecutive partitions are validated
together in chunks of up to ``chunk_rows`` rows: a chunk that passes proves each of its partitions,
and only a failing chunk is validated again partition by partition to say which one. A GX run has a
fixed cost of about a quarter second, so a lake of many small partitions no longer pays it once per
partition; the chunk bounds the memory a run needs.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping
from typing import NamedTuple

import polars as pl

from analytics.lake.reader import Lake
from analytics.quality.gate import QualityGate
from analytics.tables import table_of


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
    chunk_rows: int = 1_000_000,
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
        for uri in files:
            date = _date_of_file(uri)
            by_date[date] = by_date.get(date, 0) + 1
        scan = lake.scan(table)
        sizes = dict(scan.group_by("date").len().collect().iter_rows()) if files else {}
        rows_of = {d: sizes.get(dt.date.fromisoformat(d), 0) for d in by_date}
        for chunk in _chunks(sorted(by_date), rows_of, chunk_rows):
            days = [dt.date.fromisoformat(d) for d in chunk]
            if len(chunk) > 1:
                frame = scan.filter(pl.col("date").is_in(days)).drop("date").collect()
                if gate.validate(table, frame, now, hosts).success:
                    for date, day in zip(chunk, days, strict=True):
                        emit(RecheckRow(table, date, by_date[date], sizes.get(day, 0), True, ()))
                    continue
            for date, day in zip(chunk, days, strict=True):
                frame = scan.filter(pl.col("date") == day).drop("date").collect()
                outcome = gate.validate(table, frame, now, hosts)
                emit(
                    RecheckRow(
                        table, date, by_date[date], frame.height, outcome.success, tuple(outcome.failed_names)
                    )
                )
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


def _date_of_file(uri: str) -> str:
    """The date partition of a data file URI (``…/date=YYYY-MM-DD/part-….parquet``)."""
    folder = uri.rsplit("/", 2)[-2]
    return folder.removeprefix("date=")


def _chunks(dates: list[str], rows: Mapping[str, int], limit: int) -> list[list[str]]:
    """Consecutive dates grouped so that each group holds at most ``limit`` rows (or one date)."""
    out: list[list[str]] = []
    size = 0
    for date in dates:
        n = rows[date]
        if out and size + n <= limit:
            out[-1].append(date)
            size += n
        else:
            out.append([date])
            size = n
    return out
