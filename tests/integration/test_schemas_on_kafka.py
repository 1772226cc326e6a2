"""Framed Avro records cross a real broker intact, through both Python Kafka clients."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from kafka import KafkaConsumer, KafkaProducer

from schemas import Codec, EccErrorObserved, HostInventoried, XidRaised
from tests.conftest import KafkaCluster

pytestmark = pytest.mark.integration
CODEC = Codec()


def sample_records() -> list[dict]:
    return [
        HostInventoried(
            event_id="inv-1",
            host_id="h-001",
            cluster="c1",
            ts=1_700_000_000_000,
            payload={
                "rack": "r01",
                "fabric": "roce",
                "maintenance_domain": "md-01",
                "sku": "H100",
                "install_ts": 1_690_000_000_000,
                "gpu_count": 8,
                "nic_ports": 8,
            },
        ).to_record(),
        XidRaised(
            event_id="x-1",
            host_id="h-001",
            cluster="c1",
            ts=1_700_000_001_000,
            agent_seq=2,
            payload={"gpu": 5, "xid": 79, "pci_bus_id": "0000:bd:00.0", "message": "fell off the bus"},
        ).to_record(),
        EccErrorObserved(
            event_id="e-1",
            host_id="h-002",
            cluster="c2",
            ts=1_700_000_002_000,
            agent_seq=9,
            payload={
                "gpu": 1,
                "memory": "dram",
                "correctable": False,
                "count": 1,
                "row_remap": "remap_event",
                "remapped_rows_total": 3,
            },
        ).to_record(),
    ]


def test_kafka_python_round_trip(kafka: KafkaCluster, topic_factory: Callable[..., str]) -> None:
    topic = topic_factory("schemas-kp", partitions=2)
    cfg = kafka.settings.kafka.kafka_python(kafka.bootstrap_servers)
    producer = KafkaProducer(**cfg, acks="all", enable_idempotence=True)
    for record in sample_records():
        producer.send(topic, key=record["host_id"].encode(), value=CODEC.encode(record))
    producer.flush(30)
    producer.close()

    consumer = KafkaConsumer(topic, **cfg, auto_offset_reset="earliest", consumer_timeout_ms=10_000)
    got = [CODEC.decode(msg.value).record for msg in consumer]
    consumer.close()
    assert sorted(got, key=lambda r: r["event_id"]) == sorted(sample_records(), key=lambda r: r["event_id"])


def test_aiokafka_round_trip_and_cross_client(kafka: KafkaCluster, topic_factory: Callable[..., str]) -> None:
    topic = topic_factory("schemas-aio", partitions=1)
    cfg = kafka.settings.kafka.aiokafka(kafka.bootstrap_servers)

    async def run() -> list[dict]:
        producer = AIOKafkaProducer(**cfg, acks="all", enable_idempotence=True)
        await producer.start()
        try:
            for record in sample_records():
                await producer.send_and_wait(
                    topic, key=record["host_id"].encode(), value=CODEC.encode(record)
                )
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(topic, **cfg, auto_offset_reset="earliest", enable_auto_commit=False)
        await consumer.start()
        try:
            batches = await consumer.getmany(timeout_ms=10_000, max_records=100)
            out = [CODEC.decode(m.value).record for msgs in batches.values() for m in msgs]
            while len(out) < len(sample_records()):
                more = await consumer.getmany(timeout_ms=5_000)
                if not more:
                    break
                out += [CODEC.decode(m.value).record for msgs in more.values() for m in msgs]
            return out
        finally:
            await consumer.stop()

    got = asyncio.run(run())
    assert [r["event_id"] for r in got] == [r["event_id"] for r in sample_records()]

    # what aiokafka wrote, kafka-python reads
    kp = KafkaConsumer(
        topic,
        **kafka.settings.kafka.kafka_python(kafka.bootstrap_servers),
        auto_offset_reset="earliest",
        consumer_timeout_ms=10_000,
    )
    assert [CODEC.decode(m.value).record for m in kp] == sample_records()
    kp.close()
