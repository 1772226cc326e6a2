"""A made-up history in the shape of public fault traces, through import, detect, the planner and the lake.

Shape (``bench/history_trace.py``): JSON lines of node id, relative days, one row per start or end,
a nested three-level fault type, zero-length incidents (start and end at one time), and an
inventory file naming fault-free hosts too. Checked against the history itself: no host out after
its last incident ended, no finding deferred while its domain had room at that event time, a halt
while a domain is over its failure buffer, fault counts equal to incident counts, every named repeat
pattern flagged (the RMA'd host escalated) and the host-level repeat recall.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from analytics.jobs import load_faults
from analytics.lake import Archiver
from bench import history_trace as trace
from ground.kafka import admin
from ground.settings import Settings
from producers.importer import run_import
from producers.importer.incidents import parse_start
from producers.importer.run import plan_import
from streams.core.findings import Finding
from streams.core.planning.budget import budget
from streams.core.policy import load_policy
from streams.worker import spawn_worker
from tests.conftest import KafkaCluster, free_ports
from tests.streams.kafka_io import decoded, isolated_settings, wait_for, with_own_lake

pytestmark = pytest.mark.integration

DAY, HOUR = trace.DAY, 3_600_000
RETURNING = {trace.host(n) for n in (1, 2, 12, 30, 31, 32, 33)}  # every host the planner works on


@pytest.fixture
def settings(kafka: KafkaCluster, tmp_path: Path) -> Settings:
    s = with_own_lake(isolated_settings(kafka.settings), str(tmp_path / "lake"))
    admin.create_topics(s)
    return s


def test_the_planner_follows_a_real_shaped_history(settings: Settings, tmp_path: Path) -> None:
    start_ms = parse_start((dt.datetime.now(dt.UTC) - dt.timedelta(days=trace.DAYS)).date().isoformat())
    path, hosts = trace.write_files(tmp_path)
    summary = run_import(settings, path, trace.MAPPING, start_ms=start_ms, inventory=hosts)
    assert (summary.incidents, summary.bad_rows, summary.warnings) == (len(trace.INCIDENTS), [], [])
    signals = sum(1 for *_, kind in trace.INCIDENTS if trace.MAPPING.signal_of("/".join(kind)) is not None)
    assert summary.hardware_sent == signals
    inventoried = {r["host_id"]: r["payload"]["maintenance_domain"] for r in decoded(settings, "inventory")}
    assert inventoried == {trace.host(n): d for n, d in trace.LAYOUT.items()}  # fault-free hosts too

    (port,) = free_ports(1)
    worker = spawn_worker(settings, web_port=port, data_dir=tmp_path / "w", log_path=tmp_path / "w.log")
    try:
        worker.wait_ready(60)

        def planned() -> list[dict[str, Any]] | None:
            actions = [
                r for r in decoded(settings, "actions") if r["event_type"] == "MaintenanceActionRecorded"
            ]
            returned = {a["host_id"] for a in actions if a["payload"]["kind"] == "returned"}
            resumed = any(a["payload"]["kind"] == "train_resumed" for a in actions)
            return actions if returned >= RETURNING and resumed else None

        actions = wait_for(planned, 180, "the planner's work on the whole history")
        # no host out after its last incident ended: none out for an incident, none in the planner's work
        for node in sorted(trace.LAYOUT):
            host = worker.get_json(f"/hosts/{trace.host(node)}")
            assert (host["status"], host["out_for"]) == ("in_service", []), host
        repairs = {r["cause"]: r for r in worker.get_json("/repair-times")}
    finally:
        assert worker.stop() == 0, (tmp_path / "w.log").read_text()[-3000:]

    # a zero-length or sub-hour outage is a reset, never a repair's time (what the planner draws from)
    gpu = [round((end - start) * DAY) for _, start, end, kind in trace.INCIDENTS if kind == trace.GPU_LOST]
    by_operation = repairs["faulty_gpu"]["by_operation"]
    assert by_operation["reboot"]["samples"] == sum(1 for t in gpu if t < HOUR) > 0
    assert by_operation["repair"]["samples"] == sum(1 for t in gpu if t >= HOUR)

    policy = load_policy()
    capacity = budget(trace.DOMAIN_SIZE, policy.planner.capacity_buffer_pct)
    failure_budget = budget(trace.DOMAIN_SIZE, policy.planner.failure_buffer_pct)
    intervals = trace.out_intervals(start_ms, actions)
    kinds = [(a["host_id"], a["payload"]["kind"], a["ts"]) for a in actions]

    # no finding deferred while its domain had room at that event time, checked against the history
    delays = trace.deferral_delays(intervals, actions, capacity)
    assert len(delays) >= 2 and max(delays.values()) == 0, delays  # node-2 and node-12 at least
    print(f"deferral delay after room: {delays} (ms)")
    # node-1 was out for the very fault its RMA is for while node-3 filled the capacity: it took none,
    # so it waited for none
    flagged = min(ts for h, k, ts in kinds if h == "node-1" and k == "suspected")
    assert trace.out_at(intervals["md-a"], flagged, "node-1") >= capacity
    assert ("node-1", "rma_opened", flagged) in kinds

    # a halt while a domain is over its failure buffer: when md-b's third link went down (day 32)
    halts = [
        (a["payload"]["maintenance_domain"], a["payload"]["kind"], a["ts"])
        for a in actions
        if a["payload"]["kind"].startswith("train_")
    ]
    over = start_ms + 32 * DAY
    assert ("md-b", "train_halted", over) in halts, halts
    assert trace.out_at(intervals["md-b"], over, "-") > failure_budget

    # every named repeat pattern flagged on its host within its days; the RMA'd host escalated
    findings = [
        Finding.from_record(r) for r in decoded(settings, "findings") if r["event_type"] == "FindingRaised"
    ]
    for p in trace.PATTERNS:
        lo, hi = start_ms + round(p.first * DAY), start_ms + round(p.last * DAY)
        hits = [f.rule for f in findings if f.host_id == trace.host(p.node) and lo <= f.ts <= hi]
        assert hits, f"{p.name}: not flagged"
        if p.escalated:
            assert any(
                h == trace.host(p.node) and k == "escalated" and lo <= ts <= hi for h, k, ts in kinds
            ), p
    # host-level repeat recall at the rules' own definitions, over the signals the import sent
    hardware = plan_import(path, trace.MAPPING, start_ms=start_ms, inventory=hosts).hardware
    hit, repeats = trace.recall(trace.host_repeats(hardware, policy), findings)
    print(f"host-level repeat recall: {hit}/{repeats}")
    assert repeats >= len(trace.PATTERNS) and hit / repeats >= 0.95

    Archiver(settings).run(until_idle=True, max_seconds=60)
    faults = load_faults(settings.lake.path).collect()
    # one fault per incident (its generated signal linked to it), host by host
    assert Counter(faults["host_id"].to_list()) == Counter(trace.host(n) for n, *_ in trace.INCIDENTS)
