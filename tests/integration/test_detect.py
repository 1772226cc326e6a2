"""fleetpulse detect on the real broker: a small stream with known lemons, slow hosts and poison records."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaProducer
from prometheus_client.parser import text_string_to_metric_families

from streams.core.actions import Action
from streams.core.fleet.lifecycle import replay
from streams.core.policy import DEFAULT_POLICY_FILE
from streams.testing import Scenario
from streams.web import describe_host
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
EXPECTED_ACTIONS = 18
SETTLE_S = 2.0  # a topic's record count must hold this long before it counts as final


def settled(settings, family: str, at_least: int, timeout_s: float) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    """The decoded records of a topic once it holds ``at_least`` and has not grown for SETTLE_S.

    Waiting only for ``at_least`` would hide late duplicates; this returns what the topic settles on.
    """
    deadline = time.monotonic() + timeout_s
    records: list[dict[str, Any]] = []
    changed = time.monotonic()
    while time.monotonic() < deadline:
        latest = decoded(settings, family)
        if len(latest) != len(records):
            records, changed = latest, time.monotonic()
        elif len(records) >= at_least and time.monotonic() - changed >= SETTLE_S:
            return records
        time.sleep(0.25)
    raise AssertionError(
        f"{family}: no stable count of at least {at_least} within {timeout_s:.0f} s (last {len(records)})"
    )


def slow_hosts(findings: list[dict[str, Any]]) -> set[str]:
    return {r["host_id"] for r in findings if r["payload"]["detector"] == "slow_host"}


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
        actions = [Action.from_record(r) for r in settled(settings, "actions", EXPECTED_ACTIONS, 40)]
        ids = Counter(a.action_id for a in actions)
        assert len(actions) == EXPECTED_ACTIONS and max(ids.values()) == 1, ids.most_common(3)
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
        # the fleet gauges a scrape reads agree with /domains
        scraped = {
            (family.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text)
            for s in family.samples
        }
        assert scraped[("fleetpulse_fleet_domain_queued_operations", (("domain", "c1-md0"),))] == 1
        out = [
            v
            for (name, labels), v in scraped.items()
            if name == "fleetpulse_fleet_hosts_out" and ("domain", "c1-md0") in labels
        ]
        assert sum(out) == domains["c1-md0"]["out"]
        assert scraped[("fleetpulse_fleet_trains_halted", ())] == sum(d["halted"] for d in domains.values())
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
        actions = [Action.from_record(r) for r in settled(settings, "actions", EXPECTED_ACTIONS, 60)]
        ids = Counter(a.action_id for a in actions)
        # none lost, none duplicated
        assert len(actions) == EXPECTED_ACTIONS and max(ids.values()) == 1, ids.most_common(3)
        check_actions(actions)
        findings = {r["payload"]["finding_id"] for r in decoded(settings, "findings")}
        assert len(findings) == len(EXPECTED_FINDINGS)  # repeats of a finding (at-least-once) keep their id

        # the restarted worker's state is exactly the fold of the log, each action applied once
        wait_for(
            lambda: second.get_json("/health")["actions_applied"] >= EXPECTED_ACTIONS, 10, "worker caught up"
        )
        assert second.get_json("/health")["actions_applied"] == EXPECTED_ACTIONS
        fold = replay(actions)
        assert second.get_json("/hosts") == [describe_host(h) for _, h in sorted(fold.hosts.items())]
        domains = {d["domain"]: d for d in second.get_json("/domains")}
        assert domains["c1-md0"]["out"] == 1 and domains["c1-md0"]["queued"] == 1
        # and a re-delivered prefix of the log (what a crash before the commit replays) changes nothing
        assert replay(actions + actions[: len(actions) // 2]) == fold
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
        wait_for(
            lambda: slow_hosts(decoded(settings, "findings")) >= SCENARIO.slow_host_ids,
            60,
            "slow-host findings",
        )
        # once the findings stop coming: exactly the slow hosts, none flagged by a window closed too early
        assert (
            slow_hosts(settled(settings, "findings", len(SCENARIO.slow_host_ids), 30))
            == SCENARIO.slow_host_ids
        )
    finally:
        producer.close()
        assert worker.stop() == 0, log.read_text()[-3000:]
