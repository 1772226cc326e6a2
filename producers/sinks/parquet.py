"""Parquet sink: the lake layout ``<out>/<table_name>/date=YYYY-MM-DD/<run>-<n>.parquet``.

Rows are buffered per (table, event date) and written in large files; names are the run id
plus a counter, so a re-run of the same seed rewrites the same files instead of duplicating.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from producers.batches import EventBatch
from producers.errors import SinkError
from schemas.arrow import table_name

DAY_MS = 86_400_000


def partition_path(out: Path, event_type: str, day: int) -> Path:
    date = (dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(days=day)).date().isoformat()
    return out / table_name(event_type) / f"date={date}"


class ParquetSink:
    name = "parquet"

    def __init__(self, out: Path, *, run_id: str, batch_rows: int = 200_000) -> None:
        self.out = out
        self.run_id = run_id
        self.batch_rows = batch_rows
        self._buffers: dict[tuple[str, int], list[pa.Table]] = defaultdict(list)
        self._rows: dict[tuple[str, int], int] = defaultdict(int)
        self._files = 0
        self._latest_day = -(2**62)
        self.files: list[Path] = []

    def write(self, batch: EventBatch) -> None:
        for event_type, table in batch.tables().items():
            days = (table.column("ts").to_numpy() // DAY_MS).astype(np.int64)
            for day in np.unique(days):
                part = table if len(np.unique(days)) == 1 else table.filter(pc.equal(pa.array(days), day))
                key = (event_type, int(day))
                self._buffers[key].append(part)
                self._rows[key] += part.num_rows
                if self._rows[key] >= self.batch_rows:
                    self._flush(key)
            self._latest_day = max(self._latest_day, int(days.max()))
        # event time moves forward: a date two days behind is complete (late events get their own file)
        for key in sorted(k for k in self._buffers if k[1] <= self._latest_day - 2):
            self._flush(key)

    def _flush(self, key: tuple[str, int]) -> None:
        parts = self._buffers.pop(key, [])
        self._rows.pop(key, None)
        if not parts:
            return
        directory = partition_path(self.out, *key)
        path = directory / f"{self.run_id}-{self._files:06d}.parquet"
        self._files += 1
        try:
            directory.mkdir(parents=True, exist_ok=True)
            pq.write_table(pa.concat_tables(parts), path, compression="zstd")
        except OSError as exc:
            raise SinkError(str(exc), sink="parquet", target=str(path)) from exc
        self.files.append(path)

    def close(self) -> None:
        for key in sorted(self._buffers):
            self._flush(key)
