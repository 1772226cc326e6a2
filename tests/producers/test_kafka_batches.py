"""The bulk path frames records byte for byte as kafka-python's own builder does."""

from __future__ import annotations

import random

import pytest
from kafka import KafkaProducer
from kafka.record.memory_records import MemoryRecords, MemoryRecordsBuilder

from producers.sinks.kafka_batches import fill, usable

TS = 1_765_000_000_000


def built(records: MemoryRecordsBuilder) -> bytes:
    records.close()
    return bytes(records.buffer())


@pytest.mark.parametrize("compression", [0, 4])  # none, zstd
def test_a_filled_batch_is_the_builders_own(compression: int) -> None:
    rng = random.Random(3)
    keys = [f"node-{rng.randrange(400)}".encode() for _ in range(3000)]
    values = [rng.randbytes(rng.choice((0, 1, 60, 200, 20_000))) for _ in range(3000)]
    start, batches = 0, 0
    while start < len(values):
        ours = MemoryRecordsBuilder(2, compression, 64 * 1024)
        count = fill(ours, keys, values, start, 64 * 1024, TS)
        theirs = MemoryRecordsBuilder(2, compression, 64 * 1024)
        taken = 0
        while start + taken < len(values) and theirs.append(TS, keys[start + taken], values[start + taken]):
            taken += 1
        assert count == taken >= 1
        assert built(ours) == built(theirs)
        start += count
        batches += 1
    assert batches > 10  # batches filled to their size, one oversized record alone


def test_a_filled_batch_reads_back() -> None:
    records = MemoryRecordsBuilder(2, 0, 1 << 20)
    keys, values = [b"h1", b"h2", b"h1"], [b"a", b"", b"c" * 300]
    assert fill(records, keys, values, 0, 1 << 20, TS) == 3
    batch = MemoryRecords(built(records)).next_batch()
    got = [(r.offset, r.timestamp, r.key, r.value) for r in batch]
    assert got == [(0, TS, b"h1", b"a"), (1, TS, b"h2", b""), (2, TS, b"h1", b"c" * 300)]


def test_the_pinned_kafka_python_has_what_the_bulk_path_uses() -> None:
    """If an upgrade moves the internals, this fails (the sink would quietly fall back to per-record sends)."""
    producer = KafkaProducer(
        bootstrap_servers="127.0.0.1:1", api_version=(3, 9), enable_idempotence=True, acks="all"
    )
    try:
        assert usable(producer)
    finally:
        producer.close(timeout=1)
    assert not usable(object())
