"""Lakes written before the Delta format: recognised and refused with the way out, and converted.

The old layout kept plain Parquet files under ``<table>/date=…/`` and decided what was committed
in fleetpulse's own ``_manifest`` folder. ``convert`` copies what that manifest published (archiver
files below their partition's committed offset, compaction outputs with a commit record and not
the files they replaced, any other writer's files) into a new Delta lake, leaving the old one as it is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from analytics.errors import LakeError
from analytics.tables import TABLES, event_type_of
from ground.delta import DATE, DeltaTables, is_uri, with_date
from schemas.arrow import table_schema

MANIFEST = "_manifest"
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
        match = _ARCHIVE_NAME.match(path.name)
        if match is not None:
            next_offset = frontier.get((match["topic"], int(match["partition"])))
            if next_offset is not None and int(match["last"]) >= next_offset:
                continue  # written after the last commit: never published
        out.append(path)
    return out


def convert(old: str | Path, new: DeltaTables, on_table: Callable[[str, int], None] | None = None) -> dict[str, int]:
    """Copy every table's published rows into Delta tables of ``new``; rows per table.

    Quarantine and rejected records are not converted: they stay readable in the old folder.
    """
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
    return rows
