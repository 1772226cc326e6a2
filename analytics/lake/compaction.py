"""Compaction: merge the small files of closed date partitions into larger ones, atomically.

Per unit of source files: read, drop repeated ``event_id`` (first kept), sort by ``ts``, write
``compacted-<digest>.parquet`` (temp + rename), then commit a record naming the sources it
replaces and the Kafka offsets it covers; only then delete the sources, and finally rewrite the
record with ``replaces`` emptied, so a later file under a source's name is not hidden. Readers
follow the records (``catalog.visible``), so they see either the sources or the output, never
both. ``recover`` finishes or undoes a compaction that was interrupted at any step.

One compaction at a time per lake (``compaction_lock``): a second one's ``recover`` would take
the first one's fresh output for the leftover of a crash and delete it, and the first would
then delete the sources too. The archiver may run meanwhile: compaction only touches closed
partitions and its own temp files.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import logging
import os
import posixpath
import socket
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

from analytics.errors import LakeError, LakeIntegrityError
from analytics.lake.catalog import (
    CompactionRecord,
    Coverage,
    data_files,
    date_of_path,
    merge_coverage,
    read_compactions,
    visible,
)
from analytics.lake.fs import LakeFS, temp_target
from analytics.lake.layout import (
    COMPACTED_PREFIX,
    COMPACTIONS_DIR,
    compaction_record_path,
    data_path,
    is_compacted,
    parse_archive_name,
)
from analytics.lake.manifest import read_frontier
from analytics.tables import TABLES, event_type_of
from ground.settings.lake import LakeSettings
from schemas.arrow import table_schema

log = logging.getLogger(__name__)

LOCK_PATH = f"{COMPACTIONS_DIR}/.lock"


class CompactionResult(NamedTuple):
    table: str
    date: str
    file: str
    sources: int
    rows: int
    duplicates_dropped: int


def compacted_name(sources: Sequence[str], generation: int = 0) -> str:
    """Deterministic output name: a digest of the sorted source paths, and of ``generation`` above 0.

    Sources can reappear under the same names (a simulator re-run), so a unit may have the very
    sources of a committed output; a new generation keeps it from overwriting that output.
    """
    text = "\n".join(sorted(sources)) + (f"\n#{generation}" if generation else "")
    digest = hashlib.sha1(text.encode()).hexdigest()[:16]
    return f"{COMPACTED_PREFIX}{digest}.parquet"


def output_path(
    lake: LakeFS, table: str, date: str, sources: Sequence[str], records: Sequence[CompactionRecord]
) -> str:
    """The output of a unit: the first generation of its name that no committed record or file holds."""
    taken = {r.file for r in records}
    generation = 0
    while True:
        out = data_path(table, date, compacted_name(sources, generation))
        if out not in taken and not lake.exists(out):
            return out
        generation += 1


def record_path(record: CompactionRecord) -> str:
    """Where a compaction record is stored."""
    return compaction_record_path(record.table, record.date, posixpath.basename(record.file))


def settle(lake: LakeFS, record: CompactionRecord) -> None:
    """Rewrite a record whose sources are all deleted so that it no longer hides (or deletes) their paths.

    Call only once the sources are gone: until then ``replaces`` is what hides them from readers
    and lets ``recover`` finish a compaction that crashed before deleting them.
    """
    lake.write_json(record_path(record), record.settled().to_json())


def is_closed(date: str, today: dt.date, after_days: int) -> bool:
    """A date partition is closed once it is more than ``after_days`` days before ``today``."""
    return dt.date.fromisoformat(date) < today - dt.timedelta(days=after_days)


def plan_units(files: Sequence[tuple[str, int]], max_rows: int) -> list[list[str]]:
    """Group (path, rows) into compaction units of at most ``max_rows`` rows; single-file units are dropped.

    Compacted files already at least half the limit are left alone, so repeated runs converge.
    """
    candidates = [(p, n) for p, n in files if not (is_compacted(p) and n >= max_rows // 2)]
    units: list[list[str]] = []
    current: list[str] = []
    rows = 0
    for path, n in candidates:
        if current and rows + n > max_rows:
            units.append(current)
            current, rows = [], 0
        current.append(path)
        rows += n
    if current:
        units.append(current)
    return [u for u in units if len(u) > 1]


def dedup_first(table: pa.Table, key: str = "event_id") -> tuple[pa.Table, int]:
    """Keep the first row per ``key``; returns the table sorted by ``ts`` and the number dropped."""
    if table.num_rows == 0:
        return table, 0
    indexed = table.select([key]).append_column("__row", pa.array(range(table.num_rows), pa.int64()))
    firsts = indexed.group_by(key, use_threads=False).aggregate([("__row", "min")]).column("__row_min")
    kept = table.take(pc.take(firsts, pc.sort_indices(firsts)))  # first rows, in their original order
    order = pc.sort_indices(kept, sort_keys=[("ts", "ascending"), (key, "ascending")])
    return kept.take(order), table.num_rows - kept.num_rows


def coverage_of(sources: Iterable[str], records: Sequence[CompactionRecord]) -> tuple[Coverage, list[str]]:
    """Offsets covered by the sources (archiver names and earlier compactions), and the foreign files."""
    by_file = {r.file: r for r in records}
    parts: list[Coverage] = []
    foreign: list[str] = []
    for rel in sources:
        name = parse_archive_name(rel)
        if name is not None:
            parts.append({name.topic: {str(name.partition): [[name.first, name.last]]}})
        elif rel in by_file:
            parts.append(by_file[rel].covers)
            foreign.extend(by_file[rel].foreign_files)
        else:
            foreign.append(rel)
    return merge_coverage(parts), foreign


def recover(lake: LakeFS, table: str) -> list[str]:
    """Finish or undo interrupted compactions of a table; returns the paths deleted."""
    records = read_compactions(lake, table)
    committed = {r.file for r in records}
    replaced = {src for r in records for src in r.replaces}
    deleted: list[str] = []
    for rel in data_files(lake, table):
        if is_compacted(rel) and rel not in committed:
            deleted.append(rel)  # written, never committed
        elif rel in replaced:
            deleted.append(rel)  # committed, sources not yet removed
    for rel in lake.temp_files(table):
        if is_compacted(temp_target(rel)):  # the archiver's own temp files are its reconcile's business
            deleted.append(rel)
    for rel in deleted:
        lake.delete(rel)
    for record in records:
        if record.file in replaced:
            stale = record_path(record)
            lake.delete(stale)
            deleted.append(stale)
        elif not lake.exists(record.file):
            raise LakeIntegrityError(
                f"compaction record of {table} {record.date} names {record.file}, which is gone",
                lake.full(record.file),
            )
        elif record.replaces:
            settle(lake, record)  # its sources were deleted above (a crash came before the settle)
    if deleted:
        log.warning("compaction recovery in %s: removed %d leftovers", table, len(deleted))
    return deleted


def compact_unit(
    lake: LakeFS,
    table: str,
    date: str,
    sources: Sequence[str],
    records: Sequence[CompactionRecord],
    settings: LakeSettings,
    now: dt.datetime,
) -> CompactionResult:
    """Merge ``sources`` (published files of one date partition) into one committed compacted file."""
    schema = table_schema(event_type_of(table))
    parts = [_conform(lake.read_parquet(rel), schema) for rel in sources]
    merged, dropped = dedup_first(pa.concat_tables(parts))
    out = output_path(lake, table, date, sources, records)
    lake.write_parquet(out, merged, compression=settings.compression, row_group_size=settings.row_group_size)
    covers, foreign = coverage_of(sources, records)
    record = CompactionRecord(
        table=table,
        date=date,
        file=out,
        replaces=tuple(sources),
        covers=covers,
        foreign_files=tuple(foreign),
        rows=merged.num_rows,
        duplicates_dropped=dropped,
        created_at=now.isoformat(timespec="milliseconds"),
    )
    lake.write_json(record_path(record), record.to_json())  # the commit point
    if not lake.exists(out):  # another compaction's recovery took it for a leftover: keep the sources
        lake.delete(record_path(record))
        raise LakeIntegrityError(f"compacted output of {table} {date} vanished before its sources were deleted; "
                                 "is another compaction running on this lake?", lake.full(out))  # fmt: skip
    for rel in sources:
        lake.delete(rel)
    for prior in records:
        if prior.file in sources:
            lake.delete(record_path(prior))
    settle(lake, record)
    if dropped:
        log.warning("compaction of %s %s dropped %d duplicate event_ids", table, date, dropped)
    return CompactionResult(table, date, out, len(sources), merged.num_rows, dropped)


def _conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """Cast a file to the table's current schema (older or foreign files may lack columns)."""
    columns = []
    for field in schema:
        if field.name in table.column_names:
            columns.append(table.column(field.name).cast(field.type))
        else:
            columns.append(pa.nulls(table.num_rows, field.type))
    return pa.Table.from_arrays(columns, schema=schema.remove_metadata())


def compact(
    lake: LakeFS,
    settings: LakeSettings,
    *,
    tables: Iterable[str] | None = None,
    now: dt.datetime | None = None,
    all_dates: bool = False,
    max_rows: int = 1_000_000,
    on_unit: Callable[[CompactionResult], None] | None = None,
) -> list[CompactionResult]:
    """Compact every closed date partition of the given tables (all by default), one compaction at a time."""
    with compaction_lock(lake):
        return _compact(lake, settings, tables, now or dt.datetime.now(dt.UTC), all_dates, max_rows, on_unit)


def _compact(
    lake: LakeFS,
    settings: LakeSettings,
    tables: Iterable[str] | None,
    now: dt.datetime,
    all_dates: bool,
    max_rows: int,
    on_unit: Callable[[CompactionResult], None] | None,
) -> list[CompactionResult]:
    frontier = read_frontier(lake)
    results = []
    for table in tables or sorted(TABLES):
        recover(lake, table)
        records = read_compactions(lake, table)
        by_date: dict[str, list[str]] = {}
        for rel in visible(data_files(lake, table), frontier, records):
            by_date.setdefault(date_of_path(rel), []).append(rel)
        for date, files in sorted(by_date.items()):
            if not all_dates and not is_closed(date, now.date(), settings.compact_after_days):
                continue
            sized = [(rel, lake.parquet_rows(rel)) for rel in files]
            for unit in plan_units(sized, max_rows):
                result = compact_unit(lake, table, date, unit, records, settings, now)
                records = read_compactions(lake, table)
                results.append(result)
                if on_unit is not None:
                    on_unit(result)
    lake.delete_empty_dirs(COMPACTIONS_DIR)
    return results


@contextlib.contextmanager
def compaction_lock(lake: LakeFS) -> Iterator[None]:
    """Hold the lake's compaction lock: a file created exclusively on a local lake.

    A lock left by a compaction that died on this host is taken over; one held by a live
    process, or by another host, is refused with the file to delete if it is stale. Object
    stores have no exclusive create: there the lock is best effort, and ``compact_unit``
    still refuses to delete sources whose output vanished.
    """
    owner = {"pid": os.getpid(), "host": socket.gethostname(), "since": dt.datetime.now(dt.UTC).isoformat()}
    _acquire(lake, owner)
    try:
        yield
    finally:
        lake.delete(LOCK_PATH)


def _acquire(lake: LakeFS, owner: dict[str, object]) -> None:
    data = json.dumps(owner).encode()
    for _ in range(2):
        if not lake.is_local:
            if not lake.exists(LOCK_PATH):
                lake.write_bytes(LOCK_PATH, data)
                return
        else:
            path = lake.full(LOCK_PATH)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                pass
            else:
                with os.fdopen(fd, "wb") as out:
                    out.write(data)
                return
        holder = _holder(lake)
        if not _stale(holder):
            break
        log.warning("taking over the compaction lock of pid %s, which is gone", holder.get("pid"))
        lake.delete(LOCK_PATH)
    raise LakeError(
        f"another compaction is running on this lake (pid {holder.get('pid')} on {holder.get('host')} "
        f"since {holder.get('since')}); if it is not, delete the lock file",
        lake.full(LOCK_PATH),
    )


def _holder(lake: LakeFS) -> dict[str, object]:
    try:
        value = json.loads(lake.read_bytes(LOCK_PATH))
    except (LakeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _stale(holder: dict[str, object]) -> bool:
    """A lock of a process on this host that no longer runs (another host's cannot be checked)."""
    pid = holder.get("pid")
    if holder.get("host") != socket.gethostname() or not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
