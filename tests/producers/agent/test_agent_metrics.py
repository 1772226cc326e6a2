"""The agent's metrics: spool depth and drops from a real spool file, deliveries from a served agent."""

from __future__ import annotations

import time
from pathlib import Path

from prometheus_client import CollectorRegistry

from ground.settings import Settings
from producers.agent.collector import Problems
from producers.agent.metrics import AgentCollector
from producers.agent.service import serve
from producers.agent.spool import Entry, Spool
from producers.agent.testing import FixtureHost
from tests.producers.agent.test_service import ListSink


class Idle:
    delivered = 0
    last_delivered_s: float | None = None


def test_spool_depth_and_drops_at_its_bound(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "agent.db", max_bytes=1000)
    problems = Problems()
    problems.add("kmsg", "unparsable_line", "x")
    registry = CollectorRegistry()
    registry.register(AgentCollector(spool, Idle(), problems, lambda: 30))
    sample = Entry(False, "HostSampled", b"h1", b"s" * 100)
    fault = Entry(True, "XidRaised", b"h1", b"f" * 100)
    spool.commit([sample] * 12 + [fault] * 3, {})  # 1,500 bytes: 5 samples go
    value = registry.get_sample_value
    assert value("fleetpulse_agent_spool_events") == 10
    assert value("fleetpulse_agent_spool_bytes") == 1000
    assert value("fleetpulse_agent_spool_dropped_events_total", {"kind": "samples"}) == 5
    assert value("fleetpulse_agent_spool_dropped_events_total", {"kind": "faults"}) == 0
    assert value("fleetpulse_agent_events_emitted_total") == 30
    assert value("fleetpulse_agent_problems_total", {"source": "kmsg", "kind": "unparsable_line"}) == 1
    assert value("fleetpulse_agent_last_delivery_timestamp_seconds") is None  # nothing delivered yet
    spool.close()


def test_a_served_agent_reports_what_it_delivered(host: FixtureHost, tmp_path: Path) -> None:
    agent = host.agent_settings(tmp_path / "state", tick_s=0.05, sample_interval_s=1)
    settings = Settings.load().model_copy(update={"agent": agent})
    registry = CollectorRegistry()
    seen: list[dict[str, float | None]] = []
    out: list[bytes] = []

    def stop() -> bool:
        names = ("events_emitted_total", "events_delivered_total", "last_delivery_timestamp_seconds")
        seen.append({n: registry.get_sample_value(f"fleetpulse_agent_{n}") for n in names})
        if len(seen) < 4:
            return False
        deadline = time.monotonic() + 5  # the sender thread delivers what the rounds spooled
        while not out and time.monotonic() < deadline:
            time.sleep(0.02)
        seen.append({n: registry.get_sample_value(f"fleetpulse_agent_{n}") for n in names})
        return True

    summary = serve(settings, stop, sink_factory=lambda: ListSink(out), registry=registry)
    last = seen[-1]
    assert seen[0]["events_emitted_total"] == 0 and last["events_emitted_total"] == summary["emitted"] > 0
    assert last["events_delivered_total"] and last["events_delivered_total"] <= len(out)
    assert last["last_delivery_timestamp_seconds"] is not None
    assert registry.get_sample_value("fleetpulse_agent_spool_events") is None  # unregistered with the spool
