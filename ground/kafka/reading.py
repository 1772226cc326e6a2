"""Reading topics from outside a stream: a topic to its end, its size, a consumer group's lag.

The one implementation of each for every part (demo summary, scoring, detect-resume, fault suite),
so "read to the end" and "nothing committed yet" mean the same everywhere.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from kafka import KafkaConsumer, TopicPartition
from kafka.errors import KafkaError

from ground.errors import TopicReadError
from ground.kafka.config import KafkaSettings
from schemas import Codec, DecodeError


@dataclass(frozen=True, slots=True)
class RawRecord:
    """One record as stored: where it is and its bytes."""

    partition: int
    offset: int
    key: bytes | None
    value: bytes | None


def _consumer(bootstrap: str, kafka: KafkaSettings, **extra: object) -> KafkaConsumer:
    try:
        return KafkaConsumer(**kafka.kafka_python(bootstrap), enable_auto_commit=False, **extra)
    except KafkaError as exc:
        raise TopicReadError(f"cannot reach Kafka at {bootstrap}: {exc}") from exc


def _partitions(consumer: KafkaConsumer, topic: str) -> list[TopicPartition]:
    parts = consumer.partitions_for_topic(topic) or set()
    return [TopicPartition(topic, p) for p in sorted(parts)]


def read_to_end(
    bootstrap: str, kafka: KafkaSettings, topic: str, *, timeout_s: float = 60.0, missing_ok: bool = True
) -> Iterator[RawRecord]:
    """Every record of ``topic`` from its beginning up to the end offsets seen when reading starts.

    Raises ``TopicReadError`` when the end is not reached within ``timeout_s`` (never a silent
    partial read) or, unless ``missing_ok``, when the topic does not exist.
    """
    consumer = _consumer(bootstrap, kafka, auto_offset_reset="earliest")
    try:
        tps = _partitions(consumer, topic)
        if not tps:
            if missing_ok:
                return
            raise TopicReadError(f"topic {topic} does not exist on {bootstrap}")
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        end = consumer.end_offsets(tps)
        deadline = time.monotonic() + timeout_s
        while any(consumer.position(tp) < end[tp] for tp in tps):
            if time.monotonic() > deadline:
                raise TopicReadError(f"reading {topic} did not reach its end offsets within {timeout_s:g} s")
            for tp, msgs in consumer.poll(timeout_ms=500, max_records=5000).items():
                for m in msgs:
                    if m.offset < end[tp]:
                        yield RawRecord(m.partition, m.offset, m.key, m.value)
    finally:
        consumer.close()


def record_count(bootstrap: str, kafka: KafkaSettings, topic: str) -> int:
    """Records currently in ``topic`` (end offsets minus beginning offsets)."""
    consumer = _consumer(bootstrap, kafka)
    try:
        tps = _partitions(consumer, topic)
        if not tps:
            return 0
        end = consumer.end_offsets(tps)
        begin = consumer.beginning_offsets(tps)
        return sum(end[tp] - begin[tp] for tp in tps)
    finally:
        consumer.close()


def end_offsets(bootstrap: str, kafka: KafkaSettings, topics: Iterable[str]) -> dict[str, int]:
    """Sum of end offsets per topic: a cheap "has anything been written since" probe."""
    consumer = _consumer(bootstrap, kafka)
    try:
        out = {}
        for topic in topics:
            tps = _partitions(consumer, topic)
            out[topic] = sum(consumer.end_offsets(tps).values()) if tps else 0
        return out
    finally:
        consumer.close()


def group_lags(
    bootstrap: str, kafka: KafkaSettings, group: str, topics: Iterable[str]
) -> dict[str, int | None]:
    """Per topic: records ``group`` has not committed yet.

    ``None`` means the group has committed nothing on a topic that holds records (it has not
    started, so its lag is unknown); a topic with no records has lag 0 whether or not anything
    was committed. An offset below the log start (records expired) counts from the log start.
    """
    consumer = _consumer(bootstrap, kafka, group_id=group)
    try:
        out: dict[str, int | None] = {}
        for topic in topics:
            tps = _partitions(consumer, topic)
            if not tps:
                out[topic] = 0
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


def group_lag(bootstrap: str, kafka: KafkaSettings, group: str, topic: str) -> int | None:
    """``group_lags`` for one topic."""
    return group_lags(bootstrap, kafka, group, [topic])[topic]


def event_type_counts(bootstrap: str, kafka: KafkaSettings, topic: str) -> Counter[str]:
    """Decoded event types in ``topic`` ('<undecodable>' for bad records)."""
    codec = Codec()
    counts: Counter[str] = Counter()
    for rec in read_to_end(bootstrap, kafka, topic):
        try:
            counts[codec.decode(rec.value).event_type] += 1
        except DecodeError:
            counts["<undecodable>"] += 1
    return counts
