"""The records the archiver consumes, as it keeps them, and the ones it rejects with their reason.

A rejected record keeps its original bytes and source offset in the ``_rejected`` table, so nothing
consumed is lost even when it cannot be decoded or filed under a date.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import pyarrow as pa

from analytics.lake.layout import TopicPartition

REJECTED_SCHEMA = pa.schema(
    [
        pa.field("topic", pa.string(), nullable=False),
        pa.field("partition", pa.int32(), nullable=False),
        pa.field("offset", pa.int64(), nullable=False),
        pa.field("timestamp_ms", pa.int64()),
        pa.field("key", pa.binary()),
        pa.field("value", pa.binary()),
        pa.field("error_type", pa.string(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),
        pa.field("rejected_at", pa.timestamp("us", tz="UTC"), nullable=False),
    ]
)


class ConsumedRecord(NamedTuple):
    """One Kafka record as the archiver saw it (client-library independent)."""

    topic: str
    partition: int
    offset: int
    timestamp_ms: int | None
    key: bytes | None
    value: bytes | None

    @property
    def tp(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)

    @classmethod
    def of(cls, message: Any) -> ConsumedRecord:
        """A kafka-python ``ConsumerRecord`` (anything with its fields), as the archiver keeps it."""
        return cls(
            message.topic, message.partition, message.offset, message.timestamp, message.key, message.value
        )


class Rejected(NamedTuple):
    record: ConsumedRecord
    error_type: str
    reason: str


def rejected_table(rejected: Iterable[Rejected], now: dt.datetime) -> pa.Table:
    """Rejected records with their original bytes, reason and source offsets."""
    rows: list[Mapping[str, Any]] = [
        {
            "topic": r.record.topic,
            "partition": r.record.partition,
            "offset": r.record.offset,
            "timestamp_ms": r.record.timestamp_ms,
            "key": r.record.key,
            "value": r.record.value,
            "error_type": r.error_type,
            "reason": r.reason,
            "rejected_at": now,
        }
        for r in rejected
    ]
    return pa.Table.from_pylist(rows, schema=REJECTED_SCHEMA)
