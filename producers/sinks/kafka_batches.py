"""Whole record batches into kafka-python's accumulator: the bulk path for pre-encoded values.

``KafkaProducer.send`` costs about 37 µs of CPU a record (argument checks, a future and callbacks
per record, the builder's per-record varints). A bulk sender frames a partition's records itself,
one ``bytes.join`` each, into full v2 batches that the producer's own sender thread drains, so
idempotence (producer id, sequence numbers assigned at drain), retries, compression and acks are
kafka-python's, unchanged. Outcomes are counted per batch.

This reaches into kafka-python internals (pinned ``<4`` in pyproject.toml): ``usable`` says
whether a producer has them, and callers keep ``send`` for any other.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from kafka.producer.producer_batch import ProducerBatch
from kafka.record.memory_records import MemoryRecordsBuilder
from kafka.record.util import encode_varint
from kafka.structs import TopicPartition

OnDone = Callable[[int, str | None], None]  # (records, first error or None)
# A record's fixed parts around key and value: attributes 0, timestamp delta 0 (every record of a
# batch has the batch's timestamp), and no headers.
_HEAD = b"\x00\x00"
_NO_HEADERS = b"\x00"


def varint(value: int) -> bytes:
    """Kafka's zig-zag varint (record lengths, offset deltas, key and value sizes), by kafka-python's own code."""
    out = bytearray()
    encode_varint(value, out.append)
    return bytes(out)


_SMALL = [varint(i) for i in range(1 << 14)]  # offset deltas and sizes below 16 k: a list lookup


def _size(n: int) -> bytes:
    return _SMALL[n] if n < len(_SMALL) else varint(n)


def fill(
    records: MemoryRecordsBuilder,
    keys: Sequence[bytes],
    values: Sequence[bytes],
    start: int,
    batch_size: int,
    timestamp_ms: int,
) -> int:
    """Frame records from ``start`` into an empty v2 builder, as many as ``batch_size`` holds (at least one);
    the bytes are those of kafka-python's own ``append`` with every record at ``timestamp_ms``. Returns how many."""
    builder = records._builder
    buffer = builder._buffer
    room = batch_size - len(buffer)
    i, n, join = start, len(values), b"".join
    while i < n:
        key, value = keys[i], values[i]
        body = join((_HEAD, _size(i - start), _size(len(key)), key, _size(len(value)), value, _NO_HEADERS))
        framed = _size(len(body)) + body
        if len(framed) > room and i > start:
            break
        buffer += framed
        room -= len(framed)
        i += 1
    count = i - start
    builder._first_timestamp = builder._max_timestamp = timestamp_ms
    builder._num_records, builder._last_offset = count, count - 1
    records._next_offset = count
    return count


def usable(producer: Any) -> bool:
    """Whether ``producer`` is a kafka-python producer with the internals the bulk path uses."""
    acc = getattr(producer, "_accumulator", None)
    needed = ("_batches", "_incomplete", "_tp_lock", "_appends_in_progress", "config")
    return all(hasattr(acc, a) for a in needed) and hasattr(producer, "_sender")


class BatchAppender:
    """Appends framed records to a kafka-python producer's accumulator, a full batch at a time."""

    def __init__(self, producer: Any, on_done: OnDone) -> None:
        self.producer = producer
        self.acc = producer._accumulator
        self.on_done = on_done
        config = self.acc.config
        self.magic = config["message_version"]
        self.compression = config["compression_attrs"]
        self.batch_size = config["batch_size"]

    def append(self, tp: TopicPartition, keys: Sequence[bytes], values: Sequence[bytes]) -> None:
        """Records of one partition, in order, as as many batches as ``batch_size`` needs."""
        start, n = 0, len(values)
        while start < n:
            start = self._one_batch(tp, keys, values, start)
        self.producer._sender.wakeup()

    def _one_batch(
        self, tp: TopicPartition, keys: Sequence[bytes], values: Sequence[bytes], start: int
    ) -> int:
        records = MemoryRecordsBuilder(self.magic, self.compression, self.batch_size)
        count = fill(records, keys, values, start, self.batch_size, int(time.time() * 1000))
        batch = ProducerBatch(tp, records)
        batch.produce_future.add_callback(self._completed, count).add_errback(self._failed, count)
        acc = self.acc
        acc._appends_in_progress.increment()
        try:
            with acc._tp_lock(tp):
                acc._batches[tp].append(batch)
                acc._incomplete.add(batch)
        finally:
            acc._appends_in_progress.decrement()
        return start + count

    def _completed(self, count: int, result: tuple[Any, Any, Callable[[int], Exception] | None]) -> None:
        errors = result[2]
        if errors is None:
            self.on_done(count, None)
            return
        exc = errors(0)
        self.on_done(count, f"{type(exc).__name__}: {exc}")

    def _failed(self, count: int, exc: BaseException) -> None:
        self.on_done(count, f"{type(exc).__name__}: {exc}")
