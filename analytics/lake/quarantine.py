"""Quarantine: batches that failed their quality gate, kept with the validation report, never read as data.

One entry per (table, Kafka partition) of a failed batch:
``_quarantine/<table>/<topic>-p<P>-o<first>-<last>/{data.parquet, report.json}``; the report is
written last, so an entry without one is an interrupted write (reconcile removes it).
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import TYPE_CHECKING, Any, NamedTuple

import pyarrow as pa

from analytics.errors import LakeError
from analytics.lake.fs import LakeFS
from analytics.lake.layout import (
    QUARANTINE_DIR,
    REPORT_NAME,
    ArchiveName,
    TopicPartition,
    parse_archive_name,
    quarantine_dir,
)
from analytics.lake.manifest import read_frontier

if TYPE_CHECKING:  # analytics.quality imports analytics.lake: a runtime import here would be circular
    from analytics.quality.gate import ValidationOutcome

log = logging.getLogger(__name__)

DATA_NAME = "data.parquet"


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
    data_path: str  # relative to the lake root
    report_path: str


def batch_id_name(batch_id: str) -> ArchiveName | None:
    return parse_archive_name(f"{batch_id}.parquet")


def write_quarantine(
    lake: LakeFS,
    name: ArchiveName,
    table: str,
    data: pa.Table,
    outcome: ValidationOutcome,
    now: dt.datetime,
    *,
    compression: str = "zstd",
) -> str:
    """Write one quarantine entry (data, then report) and log which expectations failed."""
    batch_id = str(name).removesuffix(".parquet")
    folder = quarantine_dir(table, batch_id)
    lake.write_parquet(f"{folder}/{DATA_NAME}", data, compression=compression)
    report: dict[str, Any] = {
        **outcome.report,
        "batch_id": batch_id,
        "topic": name.topic,
        "partition": name.partition,
        "first_offset": name.first,
        "last_offset": name.last,
        "quarantined_rows": data.num_rows,
        "quarantined_at": now.isoformat(timespec="milliseconds"),
        "data": f"{folder}/{DATA_NAME}",
    }
    lake.write_json(f"{folder}/{REPORT_NAME}", report)
    log.error(
        "quarantined %d %s rows from %s offsets %d-%d: failed %s",
        data.num_rows,
        table,
        TopicPartition(name.topic, name.partition),
        name.first,
        name.last,
        "; ".join(outcome.failed_names) or "(no expectation named)",
    )
    return folder


def quarantine_folders(lake: LakeFS) -> list[tuple[str, str]]:
    """(table, batch_id) of every quarantine folder, complete or not."""
    return [
        (table, batch)
        for table in lake.dirs(QUARANTINE_DIR)
        for batch in lake.dirs(f"{QUARANTINE_DIR}/{table}")
    ]


def quarantine_entries(lake: LakeFS | str) -> list[QuarantineEntry]:
    """Published quarantine entries (report present, offsets committed), oldest batch first per table."""
    lfs = lake if isinstance(lake, LakeFS) else LakeFS(lake)
    frontier = read_frontier(lfs)
    out = []
    for table, batch_id in quarantine_folders(lfs):
        name = batch_id_name(batch_id)
        folder = quarantine_dir(table, batch_id)
        report_rel = f"{folder}/{REPORT_NAME}"
        if name is None or not lfs.exists(report_rel):
            continue
        if name.tp in frontier and name.last >= frontier[name.tp]:
            continue  # written before a crash; reconcile deletes it
        try:
            report = lfs.read_json(report_rel)
        except LakeError:
            log.warning("unreadable quarantine report %s", lfs.full(report_rel))
            continue
        out.append(
            QuarantineEntry(
                table=table,
                batch_id=batch_id,
                topic=name.topic,
                partition=name.partition,
                first_offset=name.first,
                last_offset=name.last,
                rows=int(report.get("quarantined_rows", 0)),
                failed_expectations=tuple(report.get("failed_expectations", ())),
                quarantined_at=str(report.get("quarantined_at", "")),
                data_path=f"{folder}/{DATA_NAME}",
                report_path=report_rel,
            )
        )
    out.sort(key=lambda e: (e.table, e.topic, e.partition, e.first_offset))
    return out
