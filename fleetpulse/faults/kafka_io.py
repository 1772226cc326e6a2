"""Kafka I/O of the fault suite: a topic decoded whole, raw bytes produced with every ack awaited.

Thin shells over kafka-python; everything they return is plain data for ``counting``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kafka import KafkaProducer

from ground.kafka.reading import read_to_end
from schemas import Codec, DecodeError

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

    codec = Codec()
    out: list[Message] = []
    for rec in read_to_end(settings.bootstrap_servers, settings.kafka, topic, timeout_s=120.0):
        try:
            record: dict[str, Any] | None = codec.decode(rec.value).record
        except DecodeError:
            record = None
        out.append(Message(rec.partition, rec.offset, rec.key, rec.value, record))
    return out


def records(settings: Settings, topic: str) -> list[dict[str, Any]]:
    """The decodable records of ``topic`` in partition/offset order."""
    return [m.record for m in read_topic(settings, topic) if m.record is not None]


def produce_raw(
    settings: Settings, messages: Iterable[tuple[str, bytes | None, bytes]], *, linger_ms: int = 20
) -> int:
    """Send ``(topic, key, value)`` records with acks=all and wait for every ack; returns how many."""

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
