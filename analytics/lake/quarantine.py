"""Quarantine: batches that failed their quality gate, kept with the validation report, never read as data.

The rows go to ``_quarantine/<table>`` (the table's own columns plus ``batch_id``) and one report row
per (table, Kafka partition) slice to ``_quarantine/_reports``; both are Delta tables carrying the
archiver's app-transaction versions (the reports under one app id per table, ``layout.report_app_id``),
so a replay after a crash neither quarantines a slice twice nor leaves quarantined rows unreported.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from typing import TYPE_CHECKING, Any, NamedTuple

import polars as pl
import pyarrow as pa

from analytics.lake.layout import QUARANTINE_REPORTS, OffsetRange, quarantine_table
from ground.delta import DeltaTables

if TYPE_CHECKING:  # analytics.quality imports analytics.lake: a runtime import here would be circular
    from analytics.quality.gate import ValidationOutcome

log = logging.getLogger(__name__)

BATCH_ID = "batch_id"
REPORTS_SCHEMA = pa.schema(
    [
        pa.field("table", pa.string(), nullable=False),
        pa.field(BATCH_ID, pa.string(), nullable=False),
        pa.field("topic", pa.string(), nullable=False),
        pa.field("partition", pa.int32(), nullable=False),
        pa.field("first_offset", pa.int64(), nullable=False),
        pa.field("last_offset", pa.int64(), nullable=False),
        pa.field("rows", pa.int64(), nullable=False),
        pa.field("failed_expectations", pa.list_(pa.string()), nullable=False),
        pa.field("quarantined_at", pa.timestamp("us", tz="UTC"), nullable=False),
        pa.field("report", pa.string(), nullable=False),  # the great-expectations report, JSON
    ]
)


class QuarantineEntry(NamedTuple):
    """A quarantined slice of a batch, as the report generator lists it."""

    table: str
    batch_id: str
    topic: str
    partition: int
    first_offset: int
    last_offset: int
    rows: int
    failed_expectations: tuple[str, ...]
    quarantined_at: str
    report: dict[str, Any]


def quarantine_rows(table: str, slices: list[tuple[OffsetRange, pa.Table]]) -> pa.Table:
    """The rows of every slice with the batch id they belong to."""
    parts = [
        data.append_column(BATCH_ID, pa.array([str(rng)] * data.num_rows, pa.string()))
        for rng, data in slices
    ]
    return pa.concat_tables(parts)


def report_rows(
    table: str, slices: list[tuple[OffsetRange, pa.Table]], outcome: ValidationOutcome, now: dt.datetime
) -> pa.Table:
    """One report row per slice; the GX report is kept whole as JSON."""
    report = json.dumps(outcome.report, default=str, sort_keys=True)
    rows = [
        report_row(table, rng, data.num_rows, list(outcome.failed_names), now, report) for rng, data in slices
    ]
    return pa.Table.from_pylist(rows, schema=REPORTS_SCHEMA)


def report_row(
    table: str, rng: OffsetRange, rows: int, failed: list[str], at: dt.datetime, report: str
) -> dict[str, Any]:
    """One row of ``_quarantine/_reports`` (``report``: the GX report as JSON)."""
    return {
        "table": table,
        BATCH_ID: str(rng),
        "topic": rng.topic,
        "partition": rng.partition,
        "first_offset": rng.first,
        "last_offset": rng.last,
        "rows": rows,
        "failed_expectations": failed,
        "quarantined_at": at,
        "report": report,
    }


def write_quarantine(
    tables: DeltaTables,
    table: str,
    slices: list[tuple[OffsetRange, pa.Table]],
    outcome: ValidationOutcome,
    now: dt.datetime,
    versions: dict[str, int],
    report_versions: dict[str, int],
) -> None:
    """Rows first, then the reports (the list readers follow), each commit carrying its versions.

    ``versions`` are the archiver's app ids, ``report_versions`` the table's own ones in the shared
    reports table (``layout.report_app_id``): a replay after a crash between the two commits sees
    which reports are missing.
    """
    tables.append(quarantine_table(table), quarantine_rows(table, slices), versions=versions)
    write_reports(tables, table, slices, outcome, now, report_versions)
    for rng, data in slices:
        log.error(
            "quarantined %d %s rows from %s offsets %d-%d: failed %s",
            data.num_rows,
            table,
            rng.tp,
            rng.first,
            rng.last,
            "; ".join(outcome.failed_names) or "(no expectation named)",
        )


def write_reports(
    tables: DeltaTables,
    table: str,
    slices: list[tuple[OffsetRange, pa.Table]],
    outcome: ValidationOutcome,
    now: dt.datetime,
    versions: dict[str, int],
) -> None:
    """One report row per slice of ``table``'s quarantined rows, in one commit."""
    tables.append(QUARANTINE_REPORTS, report_rows(table, slices, outcome, now), versions=versions)


def quarantine_entries(tables: DeltaTables) -> list[QuarantineEntry]:
    """Every quarantined slice, oldest batch first per table."""
    reports = tables.open(QUARANTINE_REPORTS)
    if reports is None:
        return []
    frame = pl.scan_delta(reports).sort("table", "topic", "partition", "first_offset").collect()
    return [
        QuarantineEntry(
            table=row["table"],
            batch_id=row[BATCH_ID],
            topic=row["topic"],
            partition=row["partition"],
            first_offset=row["first_offset"],
            last_offset=row["last_offset"],
            rows=row["rows"],
            failed_expectations=tuple(row["failed_expectations"]),
            quarantined_at=row["quarantined_at"].isoformat(timespec="milliseconds"),
            report=json.loads(row["report"]),
        )
        for row in frame.iter_rows(named=True)
    ]


def quarantined(tables: DeltaTables, table: str) -> pl.LazyFrame | None:
    """The quarantined rows of one table (with ``batch_id``), None if it has none."""
    found = tables.open(quarantine_table(table))
    return None if found is None else pl.scan_delta(found)
