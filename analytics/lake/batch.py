"""Pure batch planning: consumed Kafka records → per-table Arrow tables with the offset of each row.

No I/O here: the archiver shell feeds records in, the publisher writes what comes out. Every
consumed offset ends in exactly one place: a table batch, the rejected list with its reason
(undecodable, or an event time the lake cannot file under a date), or the count of repeats (an
event id the batch already holds: a producer's retry delivered it twice, and one row is the fact).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import pyarrow as pa

from analytics.errors import LakeError
from analytics.lake.layout import TopicPartition, date_of
from schemas import Codec, DecodeError
from schemas.arrow import table_name, to_table

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


class Rejected(NamedTuple):
    record: ConsumedRecord
    error_type: str
    reason: str


TIMESTAMP_OUT_OF_RANGE = "TimestampOutOfRange"
CHUNK_ROWS = 5_000  # decoded dicts are turned into Arrow this many at a time, to bound memory


@dataclass
class TableBatch:
    """The decoded records of one lake table in one batch, with where each came from (row order)."""

    table: str
    event_type: str
    records: list[dict[str, Any]] = field(default_factory=list)  # not yet converted to Arrow
    sources: list[tuple[TopicPartition, int]] = field(default_factory=list)
    chunks: list[pa.Table] = field(default_factory=list)
    chunk_rows: int = CHUNK_ROWS

    def add(self, record: dict[str, Any], tp: TopicPartition, offset: int) -> None:
        self.records.append(record)
        self.sources.append((tp, offset))
        if len(self.records) >= self.chunk_rows:
            self.chunks.append(to_table(self.event_type, self.records))
            self.records = []

    @property
    def rows(self) -> int:
        return len(self.sources)

    def arrow(self) -> pa.Table:
        if self.records:
            self.chunks.append(to_table(self.event_type, self.records))
            self.records = []
        if not self.chunks:
            return to_table(self.event_type, [])
        if len(self.chunks) > 1:
            self.chunks = [pa.concat_tables(self.chunks).combine_chunks()]
        return self.chunks[0]

    def coverage(self) -> dict[TopicPartition, tuple[int, int]]:
        """First and last offset per partition among this table's records."""
        out: dict[TopicPartition, tuple[int, int]] = {}
        for tp, offset in self.sources:
            first, last = out.get(tp, (offset, offset))
            out[tp] = (min(first, offset), max(last, offset))
        return out


class PartitionRange(NamedTuple):
    first: int
    last: int
    records: int


@dataclass
class BatchPlan:
    tables: dict[str, TableBatch]
    rejected: list[Rejected]
    ranges: dict[TopicPartition, PartitionRange]
    repeats: int = 0  # records whose event id the batch already held, dropped

    @property
    def records(self) -> int:
        return sum(r.records for r in self.ranges.values())


def calendar_error(ts: int) -> str | None:
    """Why an event time cannot be filed under a date partition, or None when it can.

    Checked while planning so such a record is rejected like an undecodable one: left in the
    batch it would fail the file split on every retry and the partition could never commit.
    """
    try:
        date_of(ts)
    except LakeError:
        return f"event time ts={ts} ms is outside the calendar (years 1-9999); microseconds sent as milliseconds?"
    return None


def plan_batch(records: Iterable[ConsumedRecord], codec: Codec, *, chunk_rows: int = CHUNK_ROWS) -> BatchPlan:
    """Decode records and group them by lake table.

    Undecodable records and records whose ``ts`` is off the calendar become ``Rejected`` with the reason;
    a record whose event id the batch already holds is counted in ``repeats`` and dropped (the quality
    gates require unique ids, so one delivered twice would otherwise quarantine its whole batch).
    """
    tables: dict[str, TableBatch] = {}
    by_type: dict[str, TableBatch] = {}
    rejected: list[Rejected] = []
    ranges: dict[TopicPartition, PartitionRange] = {}
    seen: set[tuple[str, str]] = set()
    repeats = 0
    for rec in records:
        tp = rec.tp
        prev = ranges.get(tp)
        ranges[tp] = (
            PartitionRange(rec.offset, rec.offset, 1)
            if prev is None
            else PartitionRange(min(prev.first, rec.offset), max(prev.last, rec.offset), prev.records + 1)
        )
        try:
            event = codec.decode(rec.value)
        except DecodeError as exc:
            rejected.append(Rejected(rec, type(exc).__name__, exc.reason))
            continue
        off_calendar = calendar_error(event.record["ts"])
        if off_calendar is not None:
            rejected.append(Rejected(rec, TIMESTAMP_OUT_OF_RANGE, off_calendar))
            continue
        key = (event.event_type, str(event.record["event_id"]))
        if key in seen:
            repeats += 1
            continue
        seen.add(key)
        batch = by_type.get(event.event_type)
        if batch is None:
            name = table_name(event.event_type)
            batch = TableBatch(name, event.event_type, chunk_rows=chunk_rows)
            by_type[event.event_type] = tables[name] = batch
        batch.add(event.record, tp, rec.offset)
    return BatchPlan(tables, rejected, ranges, repeats)


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
