"""Lakes written before the Delta format: recognised and refused with the way out, and converted.

The old layout kept plain Parquet files under ``<table>/date=…/`` and decided what was committed
in fleetpulse's own ``_manifest`` folder. ``convert`` copies what that manifest published (archiver
files below their partition's committed offset, compaction outputs with a commit record and not
the files they replaced, any other writer's files) into a new Delta lake, leaving the old one as it is.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from analytics.errors import LakeError
from analytics.lake.layout import (
    QUARANTINE_DIR,
    QUARANTINE_REPORTS,
    REJECTED_TABLE,
    OffsetRange,
    quarantine_table,
)
from analytics.lake.quarantine import BATCH_ID, REPORTS_SCHEMA, report_row
from analytics.lake.records import REJECTED_SCHEMA
from analytics.tables import TABLES, event_type_of
from ground.delta import DATE, DeltaTables, is_uri, with_date
from schemas.arrow import table_schema

MANIFEST = "_manifest"
OLD_REPORT, OLD_DATA = "report.json", "data.parquet"
# what the old archiver added to the great-expectations report in report.json (now columns of _reports)
_OLD_REPORT_KEYS = ("batch_id", "topic", "partition", "first_offset", "last_offset", "quarantined_rows",
                    "quarantined_at", "data")  # fmt: skip
DELTA_FILE_PREFIX = "part-"  # how delta-rs (and Spark) name data files
CONVERT_ROWS = 1_000_000  # rows per Delta commit while converting
_ARCHIVE_NAME = re.compile(r"^(?P<topic>.+)-p(?P<partition>\d+)-o(?P<first>\d+)-(?P<last>\d+)\.parquet$")


def is_legacy(root: str | Path) -> bool:
    """True for a local folder in the pre-Delta layout: a manifest, or old-named data files beside no Delta log.

    Delta writers name their files ``part-…``: a table whose first commit was killed has such files
    and no log yet, and is a young Delta table (its writer commits on the next run), not an old lake.
    """
    if is_uri(root):
        return False
    folder = Path(root).expanduser()
    if (folder / MANIFEST).is_dir():
        return True
    return any(
        (folder / t).is_dir()
        and not (folder / t / "_delta_log").is_dir()
        and any(not f.name.startswith(DELTA_FILE_PREFIX) for f in (folder / t).glob("date=*/*.parquet"))
        for t in TABLES
    )


def refuse(root: str | Path) -> None:
    """A one-line LakeError saying how to convert, for a lake in the old layout."""
    if is_legacy(root):
        raise LakeError(
            f"{root} is a lake in the pre-Delta Parquet layout; convert it with "
            f"`fleetpulse lake convert {root} NEW_PATH` and point lake.path at NEW_PATH"
        )


def _frontier(old: Path) -> dict[tuple[str, int], int]:
    out = {}
    for path in (old / MANIFEST / "offsets").glob("*/*.json"):
        data = json.loads(path.read_text())
        out[(str(data["topic"]), int(data["partition"]))] = int(data["next_offset"])
    return out


def published(old: Path, table: str) -> list[Path]:
    """The files the old manifest published for ``table``."""
    frontier = _frontier(old)
    replaced: set[str] = set()
    committed: set[str] = set()
    for path in (old / MANIFEST / "compactions" / table).rglob("*.json"):
        record = json.loads(path.read_text())
        replaced |= set(record.get("replaces", ()))
        committed.add(str(record["file"]))
    out = []
    for path in sorted((old / table).glob("date=*/*.parquet")):
        rel = path.relative_to(old).as_posix()
        if path.name.startswith((".", "_")) or rel in replaced:
            continue
        if path.name.startswith("compacted-"):
            if rel in committed:
                out.append(path)
            continue
        if _past_frontier(path.name, frontier):
            continue  # written after the last commit: never published
        out.append(path)
    return out


def _offset_range(name: str) -> OffsetRange | None:
    match = _ARCHIVE_NAME.match(name if name.endswith(".parquet") else f"{name}.parquet")
    if match is None:
        return None
    return OffsetRange(match["topic"], int(match["partition"]), int(match["first"]), int(match["last"]))


def _past_frontier(name: str, frontier: dict[tuple[str, int], int]) -> bool:
    rng = _offset_range(name)
    next_offset = None if rng is None else frontier.get((rng.topic, rng.partition))
    return rng is not None and next_offset is not None and rng.last >= next_offset


def published_quarantine(old: Path) -> list[tuple[str, OffsetRange, Path, dict[str, Any]]]:
    """(table, batch, data file, report) of every quarantined batch the old archiver published.

    The old writer wrote the data, then the report: an entry without a report, or past its partition's
    committed offset, was cut short by a crash.
    """
    frontier = _frontier(old)
    out = []
    for report_path in sorted((old / QUARANTINE_DIR).glob(f"*/*/{OLD_REPORT}")):
        folder = report_path.parent
        rng = _offset_range(folder.name)
        data = folder / OLD_DATA
        if rng is None or not data.is_file() or _past_frontier(folder.name, frontier):
            continue
        out.append((folder.parent.name, rng, data, json.loads(report_path.read_text())))
    return out


def published_rejects(old: Path) -> list[Path]:
    """The old ``_rejected/<topic>/<batch>.parquet`` files at offsets the old archiver committed."""
    frontier = _frontier(old)
    return [
        path
        for path in sorted((old / REJECTED_TABLE).glob("*/*.parquet"))
        if _offset_range(path.name) is not None and not _past_frontier(path.name, frontier)
    ]


def _report_row(table: str, rng: OffsetRange, rows: int, report: dict[str, Any]) -> dict[str, Any]:
    at = report.get("quarantined_at")
    return report_row(
        table,
        rng,
        rows,
        [str(n) for n in report.get("failed_expectations", ())],
        dt.datetime.fromisoformat(at) if at else dt.datetime.fromtimestamp(0, dt.UTC),
        json.dumps({k: v for k, v in report.items() if k not in _OLD_REPORT_KEYS}, sort_keys=True),
    )


def convert_side_records(old: Path, new: DeltaTables) -> dict[str, int]:
    """Copy the old quarantine (rows and reports) and rejected records; rows per new table."""
    rows: dict[str, int] = {}
    reports = []
    for table, rng, data, report in published_quarantine(old):
        if table not in TABLES:
            continue
        frame = pq.read_table(data)
        frame = frame.append_column(BATCH_ID, pa.array([str(rng)] * frame.num_rows, pa.string()))
        new.append(quarantine_table(table), frame)
        rows[quarantine_table(table)] = rows.get(quarantine_table(table), 0) + frame.num_rows
        reports.append(_report_row(table, rng, frame.num_rows, report))
    if reports:
        new.append(QUARANTINE_REPORTS, pa.Table.from_pylist(reports, schema=REPORTS_SCHEMA))
        rows[QUARANTINE_REPORTS] = len(reports)
    rejects = [pq.read_table(path).cast(REJECTED_SCHEMA) for path in published_rejects(old)]
    if rejects:
        new.append(REJECTED_TABLE, pa.concat_tables(rejects))
        rows[REJECTED_TABLE] = sum(t.num_rows for t in rejects)
    return rows


def convert(old: str | Path, new: DeltaTables, on_table: Callable[[str, int], None] | None = None) -> dict[str, int]:
    """Copy every table's published rows, then the quarantine and rejects, into Delta tables of ``new``;
    rows per table (the side tables under their lake paths, e.g. ``_quarantine/xid_raised``)."""
    source = Path(old).expanduser()
    if not is_legacy(source):
        raise LakeError(f"{old} is not a lake in the pre-Delta layout: nothing to convert")
    if any(new.exists(t) for t in TABLES):
        raise LakeError(f"{new.uri()} already holds Delta tables: convert into a new, empty path")
    if not is_uri(new.root) and Path(new.uri()).resolve() == source.resolve():
        raise LakeError(f"{old} is the lake to convert: convert into a new, empty path")
    rows: dict[str, int] = {}
    for table in sorted(TABLES):
        files = published(source, table)
        if not files:
            continue
        schema = table_schema(event_type_of(table))
        present = set(schema.names)
        for path in files:
            present &= set(pq.read_schema(path).names)
        # A column some file was written without (an older event schema) is null there: nullable in Delta.
        schema = pa.schema(
            [f if f.name in present else f.with_nullable(True) for f in schema], metadata=schema.metadata
        )
        rows[table] = 0
        pending: list[pa.Table] = []
        for i, path in enumerate(files):
            pending.append(pq.read_table(path, schema=schema))
            if sum(t.num_rows for t in pending) >= CONVERT_ROWS or i == len(files) - 1:
                data = pa.concat_tables(pending)
                new.append(table, with_date(data), partition_by=[DATE])
                rows[table] += data.num_rows
                pending = []
        if on_table is not None:
            on_table(table, rows[table])
    for table, n in convert_side_records(source, new).items():
        rows[table] = n
        if on_table is not None:
            on_table(table, n)
    return rows
