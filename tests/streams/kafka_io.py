"""Real-broker helpers for the detect integration tests: isolated settings, produce a scenario, read a topic."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from ground.kafka.topics import TopicSpec
from ground.settings import Settings
from schemas import Codec


def isolated_settings(base: Settings, *, partitions: int = 3) -> Settings:
    """Settings with topic names and an app id no other test uses."""
    tag = uuid.uuid4().hex[:8]
    topics = {}
    for spec_name in type(base.topics).model_fields:
        spec = getattr(base.topics, spec_name)
        if not isinstance(spec, TopicSpec):
            continue
        name = spec_name
        count = spec.partitions if name in ("alerts", "dlq") else partitions
        topics[name] = spec.model_copy(update={"name": f"t{tag}.{name}", "partitions": count})
    detect = base.detect.model_copy(
        update={"app_id": f"detect-{tag}", "internal_partitions": partitions, "commit_interval_s": 0.5}
    )
    return base.model_copy(update={"topics": base.topics.model_copy(update=topics), "detect": detect})


def with_own_lake(settings: Settings, lake: str) -> Settings:
    """``settings`` archiving into ``lake`` with an archiver group of its own."""
    update = {"path": lake, "group_id": f"archiver-{uuid.uuid4().hex[:8]}"}
    return settings.model_copy(update={"lake": settings.lake.model_copy(update=update)})


def produce(settings: Settings, records: Iterable[tuple[str, bytes, bytes]]) -> int:
    """Produce (family, key, value) records to the settings' topics; returns how many."""
    producer = KafkaProducer(
        **settings.kafka.kafka_python(settings.bootstrap_servers), acks="all", linger_ms=5
    )
    n = 0
    try:
        for family, key, value in records:
            producer.send(getattr(settings.topics, family).name, key=key, value=value)
            n += 1
        producer.flush(30)
    finally:
        producer.close()
    return n


def read_topic(settings: Settings, topic: str, timeout_s: float = 10.0) -> list[Any]:
    """Every record of a topic, from the beginning to its current end (kafka-python ConsumerRecords)."""
    consumer = KafkaConsumer(
        **settings.kafka.kafka_python(settings.bootstrap_servers), enable_auto_commit=False
    )
    try:
        parts = consumer.partitions_for_topic(topic) or set()
        tps = [TopicPartition(topic, p) for p in sorted(parts)]
        if not tps:
            return []
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        ends = consumer.end_offsets(tps)
        out: list[Any] = []
        deadline = time.monotonic() + timeout_s
        while any(consumer.position(tp) < ends[tp] for tp in tps) and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=200).values():
                out.extend(batch)
        return out
    finally:
        consumer.close()


def decoded(settings: Settings, family: str) -> list[dict[str, Any]]:
    codec = Codec()
    return [codec.decode(m.value).record for m in read_topic(settings, getattr(settings.topics, family).name)]


def wait_for(condition: Callable[[], Any], timeout_s: float, what: str, every_s: float = 0.5) -> Any:
    """Poll until ``condition()`` is truthy; AssertionError naming ``what`` on timeout."""
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        last = condition()
        if last:
            return last
        time.sleep(every_s)
    raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what} (last: {last!r})")
