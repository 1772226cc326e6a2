"""Kafka I/O of the fault suite: read a topic whole, measure a group's lag, produce raw bytes.

Thin shells over kafka-python; everything they return is plain data for ``counting``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ground.kafka.reading import read_all

if TYPE_CHECKING:
    from ground.settings import Settings


@dataclass(frozen=True, slots=True)
class Message:
    """One record of a topic: where it was, its bytes, and its decoded form (None if it does not decode)."""

    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    record: dict[str, Any] | None


def read_topic(settings: Settings, topic: str) -> list[Message]:
    """Every record of ``topic`` from the beginning to its current end, decoded where possible."""
    from schemas import Codec, DecodeError

    codec = Codec()
    out: list[Message] = []
    for partition, offset, key, value in read_all(settings.bootstrap_servers, settings.kafka, topic, idle_ms=5000):
        try:
            record: dict[str, Any] | None = codec.decode(value).record
        except DecodeError:
            record = None
        out.append(Message(partition, offset, key, value, record))
    return out


def records(settings: Settings, topic: str) -> list[dict[str, Any]]:
    """The decodable records of ``topic`` in partition/offset order."""
    return [m.record for m in read_topic(settings, topic) if m.record is not None]


def group_lag(settings: Settings, group: str, topics: Iterable[str]) -> dict[str, int | None]:
    """Per topic: records not yet committed by ``group`` (None: the group committed nothing there yet)."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(
        **settings.kafka.kafka_python(settings.bootstrap_servers), group_id=group, enable_auto_commit=False
    )
    try:
        out: dict[str, int | None] = {}
        for topic in topics:
            tps = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or set())]
            if not tps:
                out[topic] = None
                continue
            end = consumer.end_offsets(tps)
            begin = consumer.beginning_offsets(tps)
            committed = {tp: consumer.committed(tp) for tp in tps}
            if all(c is None for c in committed.values()):
                out[topic] = None if any(end[tp] > begin[tp] for tp in tps) else 0
                continue
            out[topic] = sum(end[tp] - max(committed[tp] or begin[tp], begin[tp]) for tp in tps)
        return out
    finally:
        consumer.close()


def end_offsets(settings: Settings, topics: Iterable[str]) -> dict[str, int]:
    """Sum of end offsets per topic (a cheap 'has anything been written since' probe)."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(**settings.kafka.kafka_python(settings.bootstrap_servers), enable_auto_commit=False)
    try:
        out = {}
        for topic in topics:
            tps = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or set())]
            out[topic] = sum(consumer.end_offsets(tps).values()) if tps else 0
        return out
    finally:
        consumer.close()


def produce_raw(
    settings: Settings, messages: Iterable[tuple[str, bytes | None, bytes]], *, linger_ms: int = 20
) -> int:
    """Send ``(topic, key, value)`` records with acks=all and wait for every ack; returns how many."""
    from kafka import KafkaProducer

    producer = KafkaProducer(
        **settings.kafka.kafka_python(settings.bootstrap_servers),
        acks="all",
        enable_idempotence=True,
        linger_ms=linger_ms,
        max_in_flight_requests_per_connection=5,
    )
    futures = []
    try:
        for topic, key, value in messages:
            futures.append(producer.send(topic, key=key, value=value))
        producer.flush(120)
        for f in futures:
            f.get(timeout=60)  # raises if a record was not acknowledged
    finally:
        producer.close()
    return len(futures)


def wait_until(predicate: Any, timeout_s: float, interval_s: float = 0.5) -> bool:
    """Poll ``predicate()`` until true or the timeout; returns whether it became true."""
    deadline = time.monotonic() + timeout_s
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval_s)
