"""The host agent on the real broker: detection parity with the simulator, kill -9, broker outage."""

from __future__ import annotations

import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fleetpulse.broker.process import LocalBroker
from ground.kafka import admin
from ground.launch import child_env, fleetpulse_argv, launch
from ground.settings import Settings
from producers import signals
from producers.agent.service import serve
from producers.agent.testing import FixtureHost
from schemas import Codec
from streams.worker import spawn_worker
from tests.conftest import free_ports
from tests.streams.kafka_io import decoded, isolated_settings, produce, wait_for

pytestmark = pytest.mark.integration
GPU, PORT = 2, 1
AGENT_HOST, SIM_HOST = "fx-h00001", "fx-h10001"


def with_agent(settings: Settings, host: FixtureHost, state: Path, **overrides: Any) -> Settings:
    fast = {
        "tick_s": 0.2,
        "sample_interval_s": 1,
        "infiniband": {"interval_s": 0.2},
        "aer": {"interval_s": 0.2},
        "kernel_log": {
            "kmsg_path": host.kmsg,
            "boot_id_path": host.boot_id,
            "journalctl": False,
            "interval_s": 0.2,
        },
    }
    return settings.model_copy(update={"agent": host.agent_settings(state, **(fast | overrides))})


class AgentThread:
    """``serve`` on a thread, stopped by ``stop()``; its summary when done."""

    def __init__(self, settings: Settings) -> None:
        self.stopping = False
        self.summary: dict[str, Any] = {}
        self.thread = threading.Thread(
            target=lambda: self.summary.update(serve(settings, lambda: self.stopping))
        )
        self.thread.start()

    def stop(self) -> dict[str, Any]:
        self.stopping = True
        self.thread.join(90)
        assert not self.thread.is_alive()
        return self.summary


def simulated_twin(ts: int) -> Iterator[tuple[str, bytes, bytes]]:
    """What the simulator's agent sends for the same story: XID 79 three times on one GPU, three flaps of one port."""
    codec = Codec()
    story = [signals.xid(GPU, 79)] * 3 + [signals.link(PORT, "flap", 1, "fx-rack0002-leaf:eth1")] * 3
    for seq, (event_type, payload) in enumerate(story, start=1):
        record = {
            "event_id": f"sim-{SIM_HOST}-{seq}",
            "event_type": event_type,
            "schema_version": 1,
            "host_id": SIM_HOST,
            "cluster": "fx",
            "ts": ts + seq * 500,
            "agent_seq": seq,
            "payload": payload,
        }
        yield "errors", SIM_HOST.encode(), codec.encode(record)


def inventories(ts: int) -> Iterator[tuple[str, bytes, bytes]]:
    """Nine peers in each host's maintenance domain, so one failing host stays under the halt threshold."""
    codec = Codec()
    for domain, first in (("fx-md000", 2), ("fx-md001", 10001)):
        hosts = [f"fx-h{i:05d}" for i in range(first, first + 9)] + (
            [SIM_HOST] if domain == "fx-md001" else []
        )
        for host in hosts:
            payload = {
                "rack": "fx-rack0002",
                "fabric": "infiniband",
                "maintenance_domain": domain,
                "sku": "H100",
                "install_ts": ts - 86_400_000 * 90,
                "gpu_count": 8,
                "nic_ports": 8,
            }
            record = {
                "event_id": f"inv-{host}",
                "event_type": "HostInventoried",
                "schema_version": 1,
                "host_id": host,
                "cluster": "fx",
                "ts": ts,
                "agent_seq": 1,
                "payload": payload,
            }
            yield "inventory", host.encode(), codec.encode(record)


def story_on(host: FixtureHost, pause_s: float = 0.6) -> None:
    for _ in range(3):
        host.fall_off_bus(GPU)
        time.sleep(pause_s)
    for _ in range(3):
        host.flap(PORT)
        time.sleep(pause_s)


def per_host(findings: list[dict[str, Any]], actions: list[dict[str, Any]], host_id: str) -> tuple[Any, ...]:
    rules = sorted(
        (r["payload"]["detector"], r["payload"]["rule"], r["payload"]["scope_key"].split("/", 1)[-1])
        for r in findings
        if r["host_id"] == host_id
    )
    kinds = [r["payload"]["kind"] for r in actions if r["host_id"] == host_id]
    return rules, kinds


def test_agent_host_gets_the_same_findings_and_actions_as_the_simulated_one(kafka, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    settings = isolated_settings(kafka.settings)
    host = FixtureHost(tmp_path / "host")
    (port,) = free_ports(1)
    worker = spawn_worker(settings, web_port=port, data_dir=tmp_path / "w", log_path=tmp_path / "w.log")
    agent: AgentThread | None = None
    try:
        worker.wait_ready(60)
        now = int(time.time() * 1000)
        produce(settings, inventories(now - 5000))
        agent = AgentThread(with_agent(settings, host, tmp_path / "state", maintenance_domain="fx-md000"))
        produce(settings, simulated_twin(now))
        story_on(host)

        def both_found() -> bool:
            hosts = Counter(r["host_id"] for r in decoded(settings, "findings"))
            return hosts[AGENT_HOST] >= 2 and hosts[SIM_HOST] >= 2

        wait_for(both_found, 60, "findings for both hosts")
        time.sleep(3)  # let the planner finish both hosts' actions
        findings, actions = decoded(settings, "findings"), decoded(settings, "actions")
        ours, twin = per_host(findings, actions, AGENT_HOST), per_host(findings, actions, SIM_HOST)
        assert ours == twin
        assert ("repeat_offender", "fell_off_bus_repeat_gpu", str(GPU)) in ours[0]
        assert ("repeat_offender", "link_flap_repeat_port", str(PORT)) in ours[0]
        assert "rma_opened" in ours[1]
        assert decoded(settings, "dlq") == []
    finally:
        if agent is not None:
            summary = agent.stop()
            assert summary["spooled"] == 0, summary
        assert worker.stop() == 0, (tmp_path / "w.log").read_text()[-3000:]


def agent_events(settings: Settings) -> list[dict[str, Any]]:
    return [
        r
        for f in ("inventory", "samples", "errors")
        for r in decoded(settings, f)
        if r["host_id"] == AGENT_HOST
    ]


def test_kill_9_and_restart_sends_every_event_once_under_one_id(kafka, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    host = FixtureHost(tmp_path / "host")
    settings = with_agent(isolated_settings(kafka.settings), host, tmp_path / "state")
    admin.create_topics(settings)
    log = tmp_path / "agent.log"
    env = child_env(settings)

    first, _ = launch(fleetpulse_argv("agent"), env, log)
    for gpu in range(4):
        host.fall_off_bus(gpu)
        time.sleep(0.3)
    wait_for(
        lambda: len([r for r in agent_events(settings) if r["event_type"] == "XidRaised"]) >= 2,
        30,
        "first XIDs",
    )
    first.send_signal(signal.SIGKILL)
    first.wait(10)
    for gpu in range(4, 8):
        host.fall_off_bus(gpu)  # while the agent is dead
    second, _ = launch(fleetpulse_argv("agent"), env, log)
    try:
        wait_for(
            lambda: len([r for r in agent_events(settings) if r["event_type"] == "XidRaised"]) >= 8,
            60,
            "all XIDs",
        )
        time.sleep(2)
    finally:
        second.send_signal(signal.SIGTERM)
        assert second.wait(30) == 0, log.read_text()[-3000:]
    events = agent_events(settings)
    xids = [r for r in events if r["event_type"] == "XidRaised"]
    by_gpu = Counter(r["payload"]["gpu"] for r in {r["event_id"]: r for r in xids}.values())
    assert by_gpu == Counter(range(8))  # none lost, none emitted twice under another id
    by_id: dict[str, dict[str, Any]] = {}
    for r in events:
        assert by_id.setdefault(r["event_id"], r) == r  # a re-sent record is the very same event
    seqs = sorted(r["agent_seq"] for r in by_id.values())
    assert seqs == list(range(1, len(seqs) + 1))  # one agent_seq sequence across the restart, no gap
    assert [r["event_type"] for r in by_id.values()].count("HostInventoried") == 1


def test_faults_during_a_60_s_broker_outage_arrive_afterwards(
    local_broker_factory: Callable[..., LocalBroker], tmp_path: Path
) -> None:
    broker = local_broker_factory()
    broker.start()
    base = Settings.load(kafka={"bootstrap_servers": broker.bootstrap_servers})
    host = FixtureHost(tmp_path / "host")
    settings = with_agent(isolated_settings(base), host, tmp_path / "state")
    admin.create_topics(settings)
    agent = AgentThread(settings)
    try:
        host.fall_off_bus(0)
        wait_for(lambda: any(r["event_type"] == "XidRaised" for r in agent_events(settings)), 30, "first XID")
        broker.stop()
        outage_end = time.monotonic() + 60
        gpu = 1
        while time.monotonic() < outage_end:
            host.fall_off_bus(gpu % 8)
            host.flap(gpu % 8)
            gpu += 1
            time.sleep(5)
        broker.start()
        wait_for(
            lambda: (
                len({r["event_id"] for r in agent_events(settings) if r["event_type"] == "XidRaised"}) >= gpu
            ),
            120,
            "every XID after the outage",
        )
        summary = agent.stop()
        events = {r["event_id"]: r for r in agent_events(settings)}.values()
    finally:
        agent.stop()
        broker.stop()
    assert sum(r["event_type"] == "XidRaised" for r in events) == gpu
    assert sum(r["event_type"] == "LinkEventObserved" for r in events) == gpu - 1
    assert summary["dropped"] == {"samples": 0, "faults": 0}
