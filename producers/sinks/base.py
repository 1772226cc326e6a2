"""The sink protocol (where generated events go) and the two sinks that need no I/O."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from schemas import Codec

if TYPE_CHECKING:  # only annotations: the agent's sender must not load numpy and pyarrow
    from producers.batches import EventBatch


@runtime_checkable
class Sink(Protocol):
    """Receives batches in emission order; ``close`` flushes and fails loudly if anything was lost."""

    name: str

    def write(self, batch: EventBatch) -> None: ...

    def close(self) -> None: ...


class NullSink:
    """Discards events; with ``encode`` (default) it still Avro-encodes them, as the Kafka sink would."""

    name = "null"

    def __init__(self, *, encode: bool = True, codec: Codec | None = None) -> None:
        self.encode = encode
        self.codec = codec or Codec()
        self.bytes = 0

    def write(self, batch: EventBatch) -> None:
        if self.encode:
            self.bytes += sum(len(v) for v in batch.encode(self.codec))

    def close(self) -> None:
        return None


class MemorySink:
    """Keeps everything in memory: records, or encoded values and a running digest (tests, demos)."""

    name = "memory"

    def __init__(
        self, *, keep_records: bool = True, keep_samples: bool = True, codec: Codec | None = None
    ) -> None:
        self.keep_records = keep_records
        self.keep_samples = keep_samples
        self.codec = codec or Codec()
        self.records: list[dict[str, Any]] = []
        self.digest = hashlib.sha256()
        self.count = 0
        self.closed = False

    def write(self, batch: EventBatch) -> None:
        for key, value in zip(batch.keys(), batch.encode(self.codec), strict=True):
            self.digest.update(key)
            self.digest.update(value)
        self.count += len(batch)
        if self.keep_records and (self.keep_samples or "HostSampled" not in batch.event_types()[:1]):
            self.records.extend(batch.records())

    def close(self) -> None:
        self.closed = True
