"""The simulator against a real broker: everything produced is consumed back exactly once,
also across a broker restart in the middle of a run."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from kafka import KafkaConsumer, TopicPartition

from fleetpulse.broker import LocalBroker
from fleetpulse.faults.context import EXACT_DELIVERY
from ground.kafka import admin
from ground.settings import Settings
from producers.runner import SimulationRequest, SimulationResult, run_simulation
from schemas import Codec
from tests.conftest import unique_topic_name

pytestmark = pytest.mark.integration

FAMILIES = ("inventory", "samples", "errors")


def settings_with_own_topics(bootstrap: str, hint: str) -> Settings:
    topics = {f: {"name": unique_topic_name(f"{hint}-{f}"), "partitions": 3} for f in FAMILIES}
    # exact delivery: these tests check the transport, not the simulator's deliberate duplicates
    return Settings.load(kafka={"bootstrap_servers": bootstrap}, topics=topics, simulator=EXACT_DELIVERY)


def consume_all(settings: Settings, expected: int, timeout_s: float = 60.0) -> list[Any]:
    """Every record of the three topics, read from the beginning until ``expected`` arrived (or timeout)."""
    names = [getattr(settings.topics, f).name for f in FAMILIES]
    consumer = KafkaConsumer(
        **settings.kafka.kafka_python(settings.bootstrap_servers),
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        fetch_max_bytes=32 * 1024 * 1024,
        max_partition_fetch_bytes=8 * 1024 * 1024,
    )
    try:
        partitions = [TopicPartition(t, p) for t in names for p in range(3)]
        consumer.assign(partitions)
        consumer.seek_to_beginning(*partitions)
        records: list[Any] = []
        deadline = time.monotonic() + timeout_s
        while len(records) < expected and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=500, max_records=50_000).values():
                records.extend(batch)
        # a little longer: duplicates would show up as more than expected
        for batch in consumer.poll(timeout_ms=1000).values():
            records.extend(batch)
        return records
    finally:
        consumer.close()


def check_exactly_once(settings: Settings, result: SimulationResult) -> list[Any]:
    records = consume_all(settings, result.total)
    by_topic = Counter(r.topic for r in records)
    assert dict(by_topic) == result.counts_by_topic
    codec = Codec()
    decoded = [codec.decode(r.value) for r in records]
    assert Counter(d.event_type for d in decoded) == Counter(result.counts)
    ids = [d.record["event_id"] for d in decoded]
    assert len(ids) == len(set(ids)), "duplicate event ids"
    for r, d in zip(records, decoded, strict=True):
        assert r.key == d.record["host_id"].encode()
    return records


def test_small_fleet_round_trips_through_kafka(kafka, tmp_path) -> None:
    settings = settings_with_own_topics(kafka.bootstrap_servers, "sim")
    before_ms = int(time.time() * 1000)
    request = SimulationRequest(
        preset="small", days=3, interval_s=3600, sink="kafka", truth_out=tmp_path / "truth"
    )
    result = run_simulation(settings, request)
    try:
        assert result.manifest["counts_by_topic"] == result.counts_by_topic
        records = check_exactly_once(settings, result)
        # the Kafka timestamp is the produce time, not the (old) event time
        assert min(r.timestamp for r in records) >= before_ms - 1000
        assert max(r.timestamp for r in records) <= int(time.time() * 1000) + 1000
        # per host, one partition, in agent order
        codec = Codec()
        last: dict[str, int] = {}
        partition_of: dict[tuple[str, str], int] = {}
        for r in records:
            rec = codec.decode(r.value).record
            assert partition_of.setdefault((r.topic, rec["host_id"]), r.partition) == r.partition
            if r.topic == settings.topics.samples.name:
                assert rec["agent_seq"] > last.get(rec["host_id"], 0)
                last[rec["host_id"]] = rec["agent_seq"]
    finally:
        admin.delete_topics(settings, [getattr(settings.topics, f).name for f in FAMILIES])


def test_broker_restart_mid_run_loses_and_duplicates_nothing(
    local_broker_factory: Callable[..., LocalBroker],
) -> None:
    broker = local_broker_factory()
    broker.start()
    settings = settings_with_own_topics(broker.bootstrap_servers, "restart")
    # live mode keeps the run going long enough to restart the broker under it: 25 s wall
    request = SimulationRequest(
        mode="live", duration_s=25, speed=240, interval_s=60, preset="small", sink="kafka"
    )
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["result"] = run_simulation(settings, request)
        except BaseException as exc:  # surfaced below
            outcome["error"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    time.sleep(6)
    assert worker.is_alive(), outcome
    broker.restart()
    assert worker.is_alive(), "the run ended before the broker was back: the restart was not mid-run"
    worker.join(timeout=240)
    assert not worker.is_alive()
    assert "error" not in outcome, outcome.get("error")
    result = outcome["result"]
    assert result.ticks == 100 and result.total > 4000
    check_exactly_once(settings, result)
    broker.stop()
