"""fleetpulse detect on the real broker: a small stream with known lemons, slow hosts and poison records."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from kafka import KafkaProducer

from streams.lifecycle import Action, replay
from streams.policy import DEFAULT_POLICY_FILE
from streams.testing import Scenario
from streams.worker import spawn_worker
from tests.conftest import free_ports
from tests.streams.kafka_io import decoded, isolated_settings, produce, wait_for

pytestmark = pytest.mark.integration

SCENARIO = Scenario()
# c1-md0 holds both h0003 (DRAM lemon -> RMA) and h0005 (slow -> diagnostics); capacity 1 of 8
EXPECTED_FINDINGS = {
    ("h0003", "repeat_offender", "dram_uce_repeat_gpu", "h0003/2"),
    ("h0017", "repeat_offender", "fell_off_bus_repeat_gpu", "h0017/5"),
    ("h0040", "repeat_offender", "link_flap_repeat_port", "h0040/1"),
    ("h0005", "slow_host", "slow_host", "h0005"),
    ("h0030", "slow_host", "slow_host", "h0030"),
}
STARTED = ["suspected", "drain_requested", "drained"]


def check_actions(actions: list[Action]) -> None:
    """Exactly the expected actions (the c1-md0 pair in either order: one drained, one deferred)."""
    by_host: dict[str, list[str]] = {}
    for a in actions:
        by_host.setdefault(a.host_id, []).append(a.kind)
    assert set(by_host) == SCENARIO.lemon_hosts | SCENARIO.slow_host_ids
    assert by_host["h0017"] == [*STARTED, "rma_opened"]
    assert by_host["h0040"] == [*STARTED, "cable_replacement_requested"]
    assert by_host["h0030"] == [*STARTED, "diagnostics_requested"]
    pair = sorted([by_host["h0003"], by_host["h0005"]])
    assert pair in (
        sorted([[*STARTED, "rma_opened"], ["suspected", "deferred"]]),
        sorted([[*STARTED, "diagnostics_requested"], ["suspected", "deferred"]]),
    )


@pytest.fixture
def settings(kafka):  # type: ignore[no-untyped-def]
    return isolated_settings(kafka.settings)


def test_detect_end_to_end(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (port,) = free_ports(1)
    worker = spawn_worker(settings, web_port=port, data_dir=tmp_path / "w", log_path=tmp_path / "w.log")
    try:
        worker.wait_ready(60)
        produce(settings, SCENARIO.records())
        records = wait_for(
            lambda: (r := decoded(settings, "actions")) and len(r) >= 18 and r, 40, "18 actions"
        )
        actions = [Action.from_record(r) for r in records]
        assert len(actions) == 18 and len({a.action_id for a in actions}) == 18
        check_actions(actions)

        findings = {
            (r["host_id"], r["payload"]["detector"], r["payload"]["rule"], r["payload"]["scope_key"])
            for r in decoded(settings, "findings")
        }
        assert findings == EXPECTED_FINDINGS
        slow = [r for r in decoded(settings, "findings") if r["payload"]["detector"] == "slow_host"]
        assert all(r["payload"]["score"] > 3.5 for r in slow)

        dlq = decoded(settings, "dlq")
        assert Counter(r["payload"]["error_type"] for r in dlq) == {
            "FramingError": 1,
            "UnknownSchemaError": 1,
            "InvalidRecordError": 3,
        }
        assert all(
            r["payload"]["source_topic"] == settings.topics.errors.name and r["payload"]["original_value"]
            for r in dlq
        )

        alerts = Counter(r["payload"]["alertname"] for r in decoded(settings, "alerts"))
        assert alerts["SlowHost"] == 2 and alerts["NewRMA"] in (1, 2)

        # the API serves the fold of fleet.actions; replaying the topic gives the same host states
        api = {h["host_id"]: h["status"] for h in worker.get_json("/hosts")}
        assert api == {h: s.status for h, s in replay(actions).hosts.items()}
        domains = {d["domain"]: d for d in worker.get_json("/domains")}
        assert domains["c1-md0"]["out"] == 1 and domains["c1-md0"]["queued"] == 1
        assert worker.get_json("/health")["status"] == "ok"
        text = worker.get("/metrics").decode()
        assert 'fleetpulse_detect_dead_letters_total{reason="FramingError"' in text
        assert (
            "fleetpulse_detect_events_total{" in text and "fleetpulse_detect_consumer_lag{partition=" in text
        )
    finally:
        assert worker.stop() == 0, (tmp_path / "w.log").read_text()[-3000:]


def test_sigkill_mid_stream_loses_and_duplicates_nothing(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Kill -9 right after the first actions, produce the rest while it is down, restart on the same state."""
    records = list(SCENARIO.records())
    cut = int(len(records) * 0.6)
    (port,) = free_ports(1)
    log = tmp_path / "w.log"
    first = spawn_worker(settings, web_port=port, data_dir=tmp_path / "w", log_path=log)
    try:
        first.wait_ready(60)
        produce(settings, records[:cut])
        wait_for(lambda: first.get_json("/health")["actions_applied"] >= 1, 40, "first actions", every_s=0.05)
    finally:
        assert first.kill() == -9
    produce(settings, records[cut:])
    second = spawn_worker(settings, web_port=port, data_dir=tmp_path / "w", log_path=log)
    try:
        second.wait_ready(60)
        found = wait_for(lambda: (r := decoded(settings, "actions")) and len(r) >= 18 and r, 60, "18 actions")
        wait_for(lambda: second.get_json("/health")["actions_applied"] >= 18, 10, "worker caught up")
        actions = [Action.from_record(r) for r in decoded(settings, "actions")]
        assert len(found) >= 18
        ids = Counter(a.action_id for a in actions)
        assert len(actions) == 18 and max(ids.values()) == 1, ids.most_common(3)  # none lost, none duplicated
        check_actions(actions)
        findings = {r["payload"]["finding_id"] for r in decoded(settings, "findings")}
        assert len(findings) == len(EXPECTED_FINDINGS)  # repeats of a finding (at-least-once) keep their id
        assert replay(actions) == replay(actions[::-1][::-1])
    finally:
        assert second.stop() == 0, log.read_text()[-3000:]


def test_an_empty_samples_partition_is_declared_idle_and_windows_still_close(kafka, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Partition 3 of samples never gets a record: its consumer must say so, or no cluster window ever closes."""
    policy = tmp_path / "policy.toml"
    text = DEFAULT_POLICY_FILE.read_text()
    assert 'idle_partition_timeout = "30s"' in text
    policy.write_text(text.replace('idle_partition_timeout = "30s"', 'idle_partition_timeout = "2s"'))
    settings = isolated_settings(kafka.settings, partitions=4)
    (port,) = free_ports(1)
    log = tmp_path / "w.log"
    worker = spawn_worker(settings, web_port=port, data_dir=tmp_path / "w", policy_file=policy, log_path=log)
    producer = KafkaProducer(**settings.kafka.kafka_python(settings.bootstrap_servers), acks="all")
    try:
        worker.wait_ready(60)
        hosts = sorted({key for family, key, _ in SCENARIO.records() if family == "samples"})
        for family, key, value in SCENARIO.records():
            topic = getattr(settings.topics, family).name
            partition = hosts.index(key) % 3 if family == "samples" else None  # partitions 0-2 only
            producer.send(topic, key=key, value=value, partition=partition)
        producer.flush(30)
        idle = wait_for(lambda: worker.get_json("/health")["idle"], 30, "an idle partition")
        assert f"{settings.topics.samples.name}[3]" in idle
        slow = wait_for(
            lambda: (
                {
                    r["host_id"]
                    for r in decoded(settings, "findings")
                    if r["payload"]["detector"] == "slow_host"
                }
                >= SCENARIO.slow_host_ids
            ),
            60,
            "slow-host findings",
        )
        assert slow
    finally:
        producer.close()
        assert worker.stop() == 0, log.read_text()[-3000:]
