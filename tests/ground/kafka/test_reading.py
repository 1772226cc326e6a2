"""ground.kafka.reading on the real broker: reading to the end, and what "nothing committed" means."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata

from ground.errors import TopicReadError
from ground.kafka.reading import end_offsets, group_lag, group_lags, read_to_end, record_count
from tests.conftest import KafkaCluster, unique_topic_name

pytestmark = pytest.mark.integration


def _produce(kafka: KafkaCluster, topic: str, n: int) -> None:
    producer = KafkaProducer(**kafka.settings.kafka.kafka_python(kafka.bootstrap_servers), acks="all")
    for i in range(n):
        producer.send(topic, key=str(i % 7).encode(), value=f"v{i}".encode())
    producer.flush(30)
    producer.close()


def _commit(kafka: KafkaCluster, group: str, topic: str, offsets: dict[int, int]) -> None:
    consumer = KafkaConsumer(
        **kafka.settings.kafka.kafka_python(kafka.bootstrap_servers), group_id=group, enable_auto_commit=False
    )
    tps = {TopicPartition(topic, p): OffsetAndMetadata(o, "", -1) for p, o in offsets.items()}
    consumer.assign(list(tps))
    consumer.commit(tps)
    consumer.close()


def test_read_to_end_returns_every_record_once(
    kafka: KafkaCluster, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory("read", partitions=3)
    _produce(kafka, topic, 50)
    records = list(read_to_end(kafka.bootstrap_servers, kafka.settings.kafka, topic, timeout_s=30))
    assert sorted(r.value for r in records) == sorted(f"v{i}".encode() for i in range(50))
    assert len({(r.partition, r.offset) for r in records}) == 50
    assert record_count(kafka.bootstrap_servers, kafka.settings.kafka, topic) == 50
    assert end_offsets(kafka.bootstrap_servers, kafka.settings.kafka, [topic]) == {topic: 50}


def test_a_missing_topic_is_empty_or_an_error_as_asked(kafka: KafkaCluster) -> None:
    topic = unique_topic_name("missing")
    assert list(read_to_end(kafka.bootstrap_servers, kafka.settings.kafka, topic)) == []
    with pytest.raises(TopicReadError, match="does not exist"):
        list(read_to_end(kafka.bootstrap_servers, kafka.settings.kafka, topic, missing_ok=False))


def test_lag_has_one_meaning_of_nothing_committed(
    kafka: KafkaCluster, topic_factory: Callable[..., str]
) -> None:
    empty = topic_factory("lag-empty", partitions=2)
    full = topic_factory("lag-full", partitions=1)
    group = unique_topic_name("group")
    bootstrap, settings = kafka.bootstrap_servers, kafka.settings.kafka
    _produce(kafka, full, 10)
    # nothing committed: an empty topic has nothing to read (0), a topic with records is unknown (None)
    assert group_lags(bootstrap, settings, group, [empty, full]) == {empty: 0, full: None}
    _commit(kafka, group, full, {0: 4})
    assert group_lag(bootstrap, settings, group, full) == 6
    _commit(kafka, group, full, {0: 10})
    assert group_lag(bootstrap, settings, group, full) == 0
