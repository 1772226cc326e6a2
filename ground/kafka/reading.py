"""Counts what a topic holds and what a consumer group still has to read (demo summary, fault suite)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from kafka import KafkaConsumer, TopicPartition

from ground.kafka.config import KafkaSettings


def _consumer(bootstrap: str, kafka: KafkaSettings, **extra: object) -> KafkaConsumer:
    return KafkaConsumer(**kafka.kafka_python(bootstrap), enable_auto_commit=False, **extra)


def _partitions(consumer: KafkaConsumer, topic: str) -> list[TopicPartition]:
    parts = consumer.partitions_for_topic(topic) or set()
    return [TopicPartition(topic, p) for p in sorted(parts)]


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


def group_lag(bootstrap: str, kafka: KafkaSettings, group: str, topic: str) -> int | None:
    """Records of ``topic`` not yet committed by ``group``; None if the group committed nothing yet."""
    consumer = _consumer(bootstrap, kafka, group_id=group)
    try:
        tps = _partitions(consumer, topic)
        if not tps:
            return None
        end = consumer.end_offsets(tps)
        committed = {tp: consumer.committed(tp) for tp in tps}
        if all(c is None for c in committed.values()):
            return None
        begin = consumer.beginning_offsets(tps)
        return sum(end[tp] - (committed[tp] if committed[tp] is not None else begin[tp]) for tp in tps)
    finally:
        consumer.close()


def read_all(bootstrap: str, kafka: KafkaSettings, topic: str, idle_ms: int = 3000) -> Iterator[tuple[int, int, bytes | None, bytes | None]]:
    """Every record of ``topic`` from the beginning up to its current end: (partition, offset, key, value)."""
    consumer = _consumer(bootstrap, kafka, consumer_timeout_ms=idle_ms, auto_offset_reset="earliest")
    try:
        tps = _partitions(consumer, topic)
        if not tps:
            return
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        end = consumer.end_offsets(tps)
        remaining = {tp for tp in tps if end[tp] > consumer.position(tp)}
        while remaining:
            batch = consumer.poll(timeout_ms=idle_ms, max_records=5000)
            if not batch:
                break
            for tp, msgs in batch.items():
                for m in msgs:
                    if m.offset < end[tp]:
                        yield m.partition, m.offset, m.key, m.value
                if consumer.position(tp) >= end[tp]:
                    remaining.discard(tp)
    finally:
        consumer.close()


def event_type_counts(bootstrap: str, kafka: KafkaSettings, topic: str) -> Counter[str]:
    """Decoded event types in ``topic`` ('<undecodable>' for bad records)."""
    from schemas import Codec, DecodeError

    codec = Codec()
    counts: Counter[str] = Counter()
    for _, _, _, value in read_all(bootstrap, kafka, topic):
        try:
            counts[codec.decode(value).event_type] += 1
        except DecodeError:
            counts["<undecodable>"] += 1
    return counts
