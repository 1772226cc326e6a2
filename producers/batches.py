"""Batches of events handed from the generator to a sink.

A sink asks a batch for what it needs (encoded bytes for Kafka, Arrow tables for Parquet,
plain records for tests), so the generator never knows where events go and the hot
HostSampled path can answer those questions column-wise instead of record by record.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import pyarrow as pa

from schemas import Codec, kafka_key
from schemas.arrow import table_schema, to_table

_SCHEMAS: dict[str, pa.Schema] = {}


def cached_schema(event_type: str) -> pa.Schema:
    if event_type not in _SCHEMAS:
        _SCHEMAS[event_type] = table_schema(event_type)
    return _SCHEMAS[event_type]


class EventBatch(Protocol):
    """What every batch offers its sink."""

    def __len__(self) -> int: ...

    @property
    def event_times(self) -> np.ndarray:
        """Event time (ms) of each event, in batch order."""
        ...

    def event_types(self) -> list[str]: ...

    def keys(self) -> list[bytes]:
        """Kafka key of each event: the host id."""
        ...

    def encode(self, codec: Codec) -> list[bytes]: ...

    def records(self) -> list[dict[str, Any]]: ...

    def tables(self) -> dict[str, pa.Table]:
        """One flat Arrow table per event type (the lake layout)."""
        ...

    def take(self, index: np.ndarray) -> EventBatch: ...


class RecordBatch:
    """Events held as ready records (used for everything except the HostSampled hot path)."""

    def __init__(self, records: Sequence[dict[str, Any]]) -> None:
        self._records = list(records)

    def __len__(self) -> int:
        return len(self._records)

    @property
    def event_times(self) -> np.ndarray:
        return np.fromiter((r["ts"] for r in self._records), dtype=np.int64, count=len(self._records))

    def event_types(self) -> list[str]:
        return [r["event_type"] for r in self._records]

    def keys(self) -> list[bytes]:
        return [kafka_key(r["event_type"], r["host_id"]) for r in self._records]

    def encode(self, codec: Codec) -> list[bytes]:
        return [codec.encode(r) for r in self._records]

    def records(self) -> list[dict[str, Any]]:
        return self._records

    def tables(self) -> dict[str, pa.Table]:
        groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in self._records:
            groups[r["event_type"]].append(r)
        return {t: to_table(t, rs, cached_schema(t)) for t, rs in sorted(groups.items())}

    def take(self, index: np.ndarray) -> RecordBatch:
        return RecordBatch([self._records[int(i)] for i in index])
