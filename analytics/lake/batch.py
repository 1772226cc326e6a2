"""Pure batch planning: consumed Kafka records → per-table Arrow tables with the offset of each row.

No I/O here: the archiver shell feeds records in, the publisher writes what comes out. Every
consumed offset ends in exactly one place: a table batch, the rejected list with its reason
(undecodable, or an event time the lake cannot file under a date), or the count of repeats (an
event id the batch already holds: a producer's retry delivered it twice, and one row is the fact).
"""

from __future__ import annotations

import functools
from collections.abc import Container, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa

from analytics.lake.layout import CALENDAR_MS, TopicPartition
from analytics.lake.records import ConsumedRecord, Rejected
from schemas import Codec, DecodedEvent, DecodeError
from schemas.arrow import table_name, to_table
from schemas.codec import HEADER, MAGIC_BYTE
from schemas.columns import ColumnDecoder, SubjectReader, TableBuilder, UnsupportedSchemaError

TIMESTAMP_OUT_OF_RANGE = "TimestampOutOfRange"
INT_OUT_OF_RANGE = "IntOutOfRange"
WIDE_INT = "an Avro int field holds a value outside 32 bits, which its lake column (int32) cannot hold"
CHUNK_ROWS = 5_000  # records are turned into Arrow this many at a time, to bound memory


@dataclass
class TableBatch:
    """The decoded records of one lake table in one batch, with where each came from (row order)."""

    table: str
    event_type: str
    records: list[dict[str, Any]] = field(default_factory=list)  # not yet converted to Arrow
    sources: list[tuple[TopicPartition, int]] = field(default_factory=list)
    chunks: list[pa.Table] = field(default_factory=list)
    chunk_rows: int = CHUNK_ROWS

    def add_table(self, table: pa.Table, sources: list[tuple[TopicPartition, int]]) -> None:
        """Rows decoded column-wise, after the records added so far."""
        if self.records:
            self.chunks.append(to_table(self.event_type, self.records))
            self.records = []
        self.chunks.append(table)
        self.sources.extend(sources)

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
    repeats: int = 0  # records whose event id the batch (or a recent stored batch) already held, dropped
    event_ids: dict[str, set[str]] = field(default_factory=dict)  # event type -> the ids it keeps

    @property
    def records(self) -> int:
        return sum(r.records for r in self.ranges.values())


def calendar_error(ts: int) -> str | None:
    """Why an event time cannot be filed under a date partition, or None when it can.

    Checked while planning so such a record is rejected like an undecodable one: left in the
    batch it would fail the file split on every retry and the partition could never commit.
    """
    if ts in CALENDAR_MS:
        return None
    return f"event time ts={ts} ms is outside the calendar (years 1-9999); microseconds sent as milliseconds?"


class _Rows(NamedTuple):
    """Rows decoded column-wise: one chunk of one writer schema, the batch index of each row, which stay."""

    event_type: str
    table: pa.Table
    indices: list[int]
    keep: list[bool]


@dataclass
class _Decoded:
    """Every record of a batch decoded, in lists by its index in the batch (no object per record to collect)."""

    outcome: list[DecodedEvent | Rejected | int]  # an int: the number of its chunk in ``chunks``
    event_type: list[str]
    event_id: list[str]
    ts: list[int]
    row: list[int]  # its row in its chunk
    chunks: list[_Rows]


class Columnar(NamedTuple):
    """How one writer schema is read column-wise and turned into its lake table."""

    reader: SubjectReader
    tables: TableBuilder


@functools.lru_cache(maxsize=8)
def column_readers(codec: Codec) -> dict[int, Columnar]:
    """One set per codec, by schema id: the latest schema of every subject read column-wise (``schemas.columns``)."""
    out = {}
    for schema_id, reader in ColumnDecoder(codec.registry).readers.items():
        try:
            out[schema_id] = Columnar(reader, TableBuilder(reader, codec.registry))
        except UnsupportedSchemaError:  # a layout the lake table does not mirror: one by one
            continue
    return out


def _decode_one(rec: ConsumedRecord, codec: Codec) -> DecodedEvent | Rejected:
    try:
        return codec.decode(rec.value)
    except DecodeError as exc:
        return Rejected(rec, type(exc).__name__, exc.reason)


def _partitions(
    records: list[ConsumedRecord],
) -> tuple[list[TopicPartition], dict[TopicPartition, PartitionRange]]:
    """The partition of each record (one shared object per partition) and the offsets seen of each."""
    shared: dict[tuple[str, int], TopicPartition] = {}
    spans: dict[TopicPartition, list[int]] = {}
    tps = []
    for rec in records:
        tp = shared.get((rec.topic, rec.partition))
        if tp is None:
            tp = shared[(rec.topic, rec.partition)] = rec.tp
            spans[tp] = [rec.offset, rec.offset, 0]
        span = spans[tp]
        span[0], span[1], span[2] = min(span[0], rec.offset), max(span[1], rec.offset), span[2] + 1
        tps.append(tp)
    return tps, {tp: PartitionRange(*span) for tp, span in spans.items()}


def _decode(
    records: list[ConsumedRecord], codec: Codec, readers: dict[int, Columnar], chunk_rows: int
) -> _Decoded:
    """Every record decoded: a chunk at a time where its writer schema allows, else one by one.

    A row the column decoder does not take (it would not decode, or not exactly as ``Codec.decode`` does)
    is decoded one by one, which decodes it or says why not; the rest of its chunk stays column-wise. A row
    that decodes but holds an int past 32 bits (fastavro reads it as it is) is rejected with that reason.
    """
    n = len(records)
    out = _Decoded([0] * n, [""] * n, [""] * n, [0] * n, [0] * n, [])
    groups: dict[int, list[int]] = {}
    singles = []
    for i, rec in enumerate(records):
        value = rec.value
        if readers and value is not None and len(value) > HEADER.size and value[0] == MAGIC_BYTE:
            schema_id = HEADER.unpack_from(value)[1]
            if schema_id in readers:
                groups.setdefault(schema_id, []).append(i)
                continue
        singles.append(i)
    for schema_id, indices in groups.items():
        reader, tables = readers[schema_id]
        for at in range(0, len(indices), chunk_rows):
            chunk = indices[at : at + chunk_rows]
            columns = reader.read([records[i].value for i in chunk])
            for j in np.flatnonzero(columns.ok & columns.wide).tolist():
                out.outcome[chunk[j]] = Rejected(records[chunk[j]], INT_OUT_OF_RANGE, WIDE_INT)
            singles.extend(chunk[j] for j in np.flatnonzero(~columns.ok).tolist())
            good = np.flatnonzero(columns.ok & ~columns.wide)
            if not len(good):
                continue
            table = tables.table(columns, None if len(good) == len(chunk) else good)
            kept = [chunk[j] for j in good.tolist()]
            number = len(out.chunks)
            out.chunks.append(_Rows(reader.subject, table, kept, [False] * len(kept)))
            ids, times = table.column("event_id").to_pylist(), table.column("ts").to_pylist()
            for row, i in enumerate(kept):
                out.outcome[i], out.event_type[i], out.event_id[i], out.ts[i], out.row[i] = (
                    number,
                    reader.subject,
                    ids[row],
                    times[row],
                    row,
                )
    for i in singles:
        item = out.outcome[i] = _decode_one(records[i], codec)
        if isinstance(item, DecodedEvent):
            out.event_type[i], out.event_id[i], out.ts[i] = (
                item.event_type,
                str(item.record["event_id"]),
                item.record["ts"],
            )
    return out


def plan_batch(
    records: Iterable[ConsumedRecord],
    codec: Codec,
    *,
    chunk_rows: int = CHUNK_ROWS,
    columnar: bool = True,
    stored: Container[tuple[str, str]] = (),
) -> BatchPlan:
    """Decode records and group them by lake table.

    Undecodable records and records whose ``ts`` is off the calendar become ``Rejected`` with the reason;
    a record whose event id the batch already holds is counted in ``repeats`` and dropped (the quality
    gates require unique ids, so one delivered twice would otherwise quarantine its whole batch). Both
    are judged in consumption order. ``stored`` holds (event type, event id) of rows already in the
    lake (``analytics.lake.recent``): one of those delivered again is a repeat too. ``columnar`` decodes the
    latest schemas a chunk at a time (``schemas.columns``); the plan is the same either way, damaged bodies
    included.
    """
    consumed = list(records)
    tps, ranges = _partitions(consumed)
    decoded = _decode(consumed, codec, column_readers(codec) if columnar else {}, chunk_rows)
    rejected: list[Rejected] = []
    seen: dict[str, set[str]] = {}
    repeats = 0
    singles: dict[str, list[int]] = {}
    order: dict[str, None] = {}  # event types in the order they first appear
    for i, item in enumerate(decoded.outcome):
        if isinstance(item, Rejected):
            rejected.append(item)
            continue
        ts = decoded.ts[i]
        if ts not in CALENDAR_MS:
            rejected.append(Rejected(consumed[i], TIMESTAMP_OUT_OF_RANGE, calendar_error(ts) or ""))
            continue
        event_type, event_id = decoded.event_type[i], decoded.event_id[i]
        ids = seen.get(event_type)
        if ids is None:
            ids = seen[event_type] = set()
            order[event_type] = None
        if event_id in ids or (event_type, event_id) in stored:
            repeats += 1
            continue
        ids.add(event_id)
        if isinstance(item, int):
            decoded.chunks[item].keep[decoded.row[i]] = True
        else:
            singles.setdefault(event_type, []).append(i)
    tables: dict[str, TableBatch] = {}
    for event_type in order:
        batch = TableBatch(table_name(event_type), event_type, chunk_rows=chunk_rows)
        for rows in decoded.chunks:
            if rows.event_type == event_type and any(rows.keep):
                kept = [i for i, k in zip(rows.indices, rows.keep, strict=True) if k]
                batch.add_table(
                    rows.table.filter(pa.array(rows.keep)), [(tps[i], consumed[i].offset) for i in kept]
                )
        for i in singles.get(event_type, []):
            event = decoded.outcome[i]
            assert isinstance(event, DecodedEvent)
            batch.add(event.record, tps[i], consumed[i].offset)
        tables[batch.table] = batch
    return BatchPlan(tables, rejected, ranges, repeats, seen)
