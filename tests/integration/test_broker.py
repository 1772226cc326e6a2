"""The local broker against a real JVM: idempotent start, data and offsets across restarts, errors.

Restart tests use their own LocalBroker (own ports and data dir), never the session's ``kafka``.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata
from typer.testing import CliRunner

from fleetpulse.broker import (
    BrokerStartError,
    LocalBroker,
    PortInUseError,
    ensure_running,
    stop_if_started_within,
)
from fleetpulse.broker.system import pid_alive
from fleetpulse.cli import app
from ground.kafka import admin
from ground.kafka.config import KafkaSettings
from ground.kafka.topics import TopicSpec
from ground.settings import Settings

pytestmark = pytest.mark.integration

CLIENT = KafkaSettings()  # our own broker speaks PLAINTEXT


@pytest.fixture(scope="module")
def own_broker(local_broker_factory: Callable[..., LocalBroker]) -> Iterator[LocalBroker]:
    broker = local_broker_factory()
    broker.start()
    yield broker
    broker.stop()


def settings_for(broker: LocalBroker) -> Settings:
    return Settings.load(kafka={"bootstrap_servers": broker.bootstrap_servers})


def make_topic(broker: LocalBroker, name: str, partitions: int = 1) -> None:
    admin.create_topics(settings_for(broker), [TopicSpec(name=name, partitions=partitions)])


def produce(bootstrap: str, topic: str, count: int) -> None:
    producer = KafkaProducer(**CLIENT.kafka_python(bootstrap), acks="all")
    try:
        for i in range(count):
            producer.send(topic, key=f"k{i}".encode(), value=f"v{i}".encode())
        producer.flush(timeout=30)
    finally:
        producer.close()


def consume(consumer: KafkaConsumer, count: int, timeout_s: float = 30.0) -> list[bytes]:
    values: list[bytes] = []
    for _ in range(int(timeout_s / 0.5)):
        for records in consumer.poll(timeout_ms=500, max_records=count - len(values)).values():
            values.extend(r.value for r in records)
        if len(values) >= count:
            break
    return values


def consumer_for(bootstrap: str, **config) -> KafkaConsumer:
    return KafkaConsumer(**CLIENT.kafka_python(bootstrap), enable_auto_commit=False, **config)


def test_start_twice_is_safe(own_broker: LocalBroker):
    first = own_broker.start()
    second = own_broker.start()
    assert first.running and first.ready
    assert second.pid == first.pid
    assert own_broker.status().ready


def test_the_broker_takes_its_whole_heap_at_start(own_broker: LocalBroker):
    """-Xms = -Xmx, as Kafka's start script sets them: a soak saw the RSS step once as the heap grew."""
    pid = own_broker.start().pid
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    heap = own_broker.settings.heap.encode()
    assert b"-Xmx" + heap in argv and b"-Xms" + heap in argv


def test_stop_start_keeps_records(own_broker: LocalBroker, topic_name: str):
    make_topic(own_broker, topic_name)
    produce(own_broker.bootstrap_servers, topic_name, 50)

    assert own_broker.stop() is True
    assert not own_broker.status().running
    own_broker.start()

    consumer = consumer_for(own_broker.bootstrap_servers)
    try:
        consumer.assign([TopicPartition(topic_name, 0)])
        consumer.seek_to_beginning()
        values = consume(consumer, 50)
    finally:
        consumer.close()
    assert values == [f"v{i}".encode() for i in range(50)]


def test_committed_offsets_survive_restart(own_broker: LocalBroker, topic_name: str):
    group = f"group-{topic_name}"
    tp = TopicPartition(topic_name, 0)
    make_topic(own_broker, topic_name)
    produce(own_broker.bootstrap_servers, topic_name, 20)

    consumer = consumer_for(own_broker.bootstrap_servers, group_id=group, auto_offset_reset="earliest")
    try:
        consumer.assign([tp])
        assert consume(consumer, 8)[:8] == [f"v{i}".encode() for i in range(8)]
        consumer.commit({tp: OffsetAndMetadata(8, "", -1)})
    finally:
        consumer.close()

    own_broker.restart()

    consumer = consumer_for(own_broker.bootstrap_servers, group_id=group, auto_offset_reset="earliest")
    try:
        consumer.assign([tp])
        assert consumer.committed(tp) == 8
        assert consume(consumer, 12) == [f"v{i}".encode() for i in range(8, 20)]
    finally:
        consumer.close()


def test_crash_then_start_recovers(own_broker: LocalBroker, topic_name: str):
    make_topic(own_broker, topic_name)
    produce(own_broker.bootstrap_servers, topic_name, 5)
    assert own_broker.kill() is True
    assert not own_broker.status().running  # the stale pid file is not mistaken for a live broker
    own_broker.start()
    consumer = consumer_for(own_broker.bootstrap_servers, auto_offset_reset="earliest")
    try:
        consumer.assign([TopicPartition(topic_name, 0)])
        assert len(consume(consumer, 5)) == 5
    finally:
        consumer.close()


def test_port_held_by_another_broker(own_broker: LocalBroker, local_broker_factory):
    intruder = local_broker_factory(port=own_broker.settings.port)
    with pytest.raises(PortInUseError, match="FLEETPULSE_BROKER__PORT") as info:
        intruder.start()
    assert info.value.port == own_broker.settings.port
    assert own_broker.status().ready  # untouched


def test_bad_heap_shows_jvm_output(local_broker_factory):
    broker = local_broker_factory(heap="bogus")
    with pytest.raises(BrokerStartError, match="exited during start-up") as info:
        broker.start()
    assert "Invalid maximum heap size" in info.value.log_tail
    assert not broker.files.pid_file.exists()
    assert broker.pid() is None


def test_bad_property_shows_the_log_tail(local_broker_factory):
    broker = local_broker_factory(extra_properties={"num.partitions": "lots"})
    with pytest.raises(BrokerStartError) as info:
        broker.start()
    assert "num.partitions" in str(info.value)
    assert broker.pid() is None


def test_topics_create_is_idempotent_via_cli(kafka, monkeypatch: pytest.MonkeyPatch):
    runner = CliRunner()
    env = {"KAFKA_BOOTSTRAP_SERVERS": kafka.bootstrap_servers}
    names = [spec.name for spec in kafka.settings.topics.all()]

    first = runner.invoke(app, ["topics", "create"], env=env)
    assert first.exit_code == 0, first.output
    second = runner.invoke(app, ["topics", "create"], env=env)
    assert second.exit_code == 0, second.output
    assert f"0 created, {len(names)} already existed" in second.output

    listing = runner.invoke(app, ["topics", "list"], env=env)
    assert listing.exit_code == 0, listing.output
    assert all(name in listing.output for name in names)
    assert set(names) <= set(admin.list_topics(kafka.settings))


def test_broker_cli_status_start_stop(own_broker: LocalBroker):
    runner = CliRunner()
    s = own_broker.settings
    env = {
        "FLEETPULSE_BROKER__PORT": str(s.port),
        "FLEETPULSE_BROKER__CONTROLLER_PORT": str(s.controller_port),
        "FLEETPULSE_BROKER__DATA_DIR": str(s.data_dir),
        "FLEETPULSE_BROKER__CACHE_DIR": str(s.cache_dir),
        "KAFKA_BOOTSTRAP_SERVERS": None,
    }
    status = runner.invoke(app, ["broker", "status"], env=env)
    assert status.exit_code == 0, status.output
    assert str(own_broker.pid()) in status.output
    start = runner.invoke(app, ["broker", "start"], env=env)
    assert start.exit_code == 0 and "already running" in start.output

    external = runner.invoke(app, ["broker", "start"], env={**env, "KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:1"})
    assert external.exit_code == 0 and "external" in external.output


def test_topic_factory_and_ensure_topics(kafka, topic_factory):
    compacted = topic_factory("compacted", partitions=2, cleanup_policy="compact")
    plain = topic_factory()
    assert compacted != plain and compacted.startswith("test.compacted.")
    partitions = admin.topic_partitions(kafka.settings)
    assert partitions[compacted] == 2 and partitions[plain] == 1
    again = admin.ensure_topics(kafka.settings, [TopicSpec(name=compacted, partitions=5)])
    assert again == admin.TopicReport(created=[], existing=[compacted])
    assert admin.topic_partitions(kafka.settings)[compacted] == 2  # left as it was


def test_a_run_stops_only_the_broker_it_started(
    own_broker: LocalBroker, local_broker_factory: Callable[..., LocalBroker]
):
    """`fleetpulse demo` leaves no JVM behind that it started, and never stops one it found running."""
    already = Settings(broker=own_broker.settings, kafka=KafkaSettings())
    with stop_if_started_within(already):
        ensure_running(already)
    assert own_broker.status().running

    fresh = local_broker_factory()
    settings = Settings(broker=fresh.settings, kafka=KafkaSettings())
    with stop_if_started_within(settings):
        ensure_running(settings)
        assert fresh.status().ready
    assert not fresh.status().running

    with stop_if_started_within(settings, keep=True):
        ensure_running(settings)
    assert fresh.status().running
    fresh.stop()


CALLER = """
import sys, time
from pathlib import Path
from fleetpulse.broker import LocalBroker
from ground.settings import Settings
from tests.conftest import local_broker_settings
broker = LocalBroker(local_broker_settings(Settings.load().broker, Path(sys.argv[1])), die_with_caller=True)
broker.start()
print(broker.status().pid, flush=True)
time.sleep(600)
"""


def test_a_broker_started_to_die_with_its_caller_is_gone_when_the_caller_is_killed(tmp_path: Path) -> None:
    """A killed test run or fault run must not leave its broker JVM behind (SIGKILL: no clean-up runs)."""
    caller = subprocess.Popen(
        [sys.executable, "-c", CALLER, str(tmp_path / "broker")],
        stdout=subprocess.PIPE,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        assert caller.stdout is not None
        pid = int(caller.stdout.readline())
        assert pid_alive(pid)
    finally:
        caller.kill()
        caller.wait(30)
    deadline = time.monotonic() + 30
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not pid_alive(pid)
