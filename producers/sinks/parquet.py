"""The simulator's lake sink (``--sink parquet``): events into the lake's Delta tables, ``<lake>/<table>/``.

It writes through ``ground.delta`` as the archiver does, so jobs read a simulated lake and an archived
one alike: one table per event type, partitioned by ``date``. Rows are buffered per (table, event date)
and appended in large commits. A re-run of the same run id must not duplicate them: the run yields
the same rows in the same order, so each commit records how many rows of its table and date the run
has written, as the version of the app id ``simulator:<run_id>:<date>``, and a re-run skips that
many. Counting rows, not flushes, also covers an interrupted run, whose last flushes were partial.

An event delivered twice (the simulator resends a share of events within their tick, as agents
do) is stored once: each batch keeps the first row of every event id, and a copy that comes in a
later batch (one of the two was held back as late) is dropped against the ids of its date seen so
far. Those ids are kept while the date is open (two days behind the newest event time, as the
buffers), so engines that count rows (DuckDB, Spark) see every event once and ``lake validate``
finds no repeat.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ground.delta import DATE, DAY_MS, DeltaTables, with_date
from ground.errors import LakeStorageError
from producers.batches import EventBatch
from producers.errors import SinkError
from schemas.arrow import table_name

Key = tuple[str, int]  # (event type, UTC day since the epoch)
EPOCH = dt.date(1970, 1, 1)


def first_of_each_event(table: pa.Table) -> pa.Table:
    """The rows of ``table`` with an event id not seen before in it, in their order (deterministic)."""
    ids = table.column("event_id").to_numpy(zero_copy_only=False)
    _, first = np.unique(ids, return_index=True)
    if len(first) == table.num_rows:
        return table
    return table.take(pa.array(np.sort(first)))


def app_id(run_id: str, day: int) -> str:
    """The Delta app id under which a run records its rows of one date (in every table)."""
    return f"simulator:{run_id}:{(EPOCH + dt.timedelta(days=day)).isoformat()}"


class ParquetSink:
    """Appends to the lake's Delta tables; ``tables`` names those it wrote to, ``commits`` counts its commits."""

    name = "parquet"

    def __init__(self, lake: str | Path | DeltaTables, *, run_id: str, batch_rows: int = 200_000) -> None:
        self.lake = lake if isinstance(lake, DeltaTables) else DeltaTables(lake)
        self.run_id = run_id
        self.batch_rows = batch_rows
        self._buffers: dict[Key, list[pa.Table]] = defaultdict(list)
        self._rows: dict[Key, int] = defaultdict(int)  # buffered now
        self._flushed: dict[Key, int] = defaultdict(int)  # rows of the key flushed before the buffer
        self._in_lake: dict[Key, int] = {}  # rows of the key the lake holds from this run id
        self._latest_day = -(2**62)
        self.tables: set[str] = set()
        self.commits = 0
        self.skipped = 0  # rows an earlier run of the same id had written already
        self.repeats = 0  # rows delivered again (same event id), stored once
        self._seen: dict[Key, set[str]] = defaultdict(set)  # event ids of each open date, written or buffered

    def write(self, batch: EventBatch) -> None:
        for event_type, whole in batch.tables().items():
            table = first_of_each_event(whole)
            self.repeats += whole.num_rows - table.num_rows
            days = (table.column("ts").to_numpy() // DAY_MS).astype(np.int64)
            unique = np.unique(days)
            for day in unique:
                part = table if len(unique) == 1 else table.filter(pc.equal(pa.array(days), day))
                key = (event_type, int(day))
                part = self._unseen(key, part)
                self._buffers[key].append(part)
                self._rows[key] += part.num_rows
                if self._rows[key] >= self.batch_rows:
                    self._flush(key)
            self._latest_day = max(self._latest_day, int(days.max()))
        # event time moves forward: a date two days behind is complete (late events get their own commit)
        for key in sorted(k for k in self._buffers if k[1] <= self._latest_day - 2):
            self._flush(key)
        for key in [k for k in self._seen if k[1] <= self._latest_day - 2]:
            del self._seen[key]

    def _unseen(self, key: Key, part: pa.Table) -> pa.Table:
        """``part`` without the events its date already holds (a copy in an earlier batch)."""
        seen = self._seen[key]
        ids = part.column("event_id").to_pylist()
        if seen.isdisjoint(ids):
            seen.update(ids)
            return part
        keep = [i not in seen for i in ids]
        seen.update(ids)
        self.repeats += keep.count(False)
        return part.filter(pa.array(keep))

    def _flush(self, key: Key) -> None:
        parts = self._buffers.pop(key, [])
        self._rows.pop(key, None)
        if not parts:
            return
        data = pa.concat_tables(parts)
        table, app = table_name(key[0]), app_id(self.run_id, key[1])
        start = self._flushed[key]
        end = self._flushed[key] = start + data.num_rows
        try:
            if key not in self._in_lake:
                self._in_lake[key] = self.lake.version_of(table, app) or 0
            done = min(max(self._in_lake[key] - start, 0), data.num_rows)
            self.skipped += done
            if done == data.num_rows:
                return
            self.lake.append(table, with_date(data.slice(done)), partition_by=[DATE], versions={app: end})
        except LakeStorageError as exc:
            raise SinkError(str(exc), sink=self.name, target=self.lake.uri(table)) from exc
        self._in_lake[key] = end
        self.tables.add(table)
        self.commits += 1

    def close(self) -> None:
        for key in sorted(self._buffers):
            self._flush(key)
