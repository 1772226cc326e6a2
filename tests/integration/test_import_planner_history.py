"""A made-up history in the shape of public fault traces, through import, detect, the planner and the lake.

Shape: node id, relative days, one row per start or end, a nested fault type, zero-length incidents
(start and end at one time). Checked against the history itself: no host out after its last incident
ended, no finding deferred while its domain had room at that event time, a halt while a domain is
over its failure buffer, and one fault per incident in the lake.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from analytics.jobs import load_faults
from analytics.lake import Archiver
from ground.kafka import admin
from ground.settings import Settings
from producers.importer import HistoryMapping, run_import
from producers.importer.incidents import parse_start
from producers.importer.mapping import Columns, InventoryDefaults
from streams.core.planning.budget import budget
from streams.core.policy import load_policy
from streams.worker import spawn_worker
from tests.conftest import KafkaCluster, free_ports
from tests.streams.kafka_io import decoded, isolated_settings, wait_for, with_own_lake

pytestmark = pytest.mark.integration

DAY = 86_400_000
DOMAIN_SIZE = 8  # the nine nodes named: 1-3, 5, 9-12 in imported-md000, 16 in imported-md001
MAPPING = HistoryMapping(
    columns=Columns(host="node_id", time="time", event="event", source_class="fault_type"),
    inventory=InventoryDefaults(host_prefix="node-", domain_size=DOMAIN_SIZE, cluster="trace"),
    causes={"GPU/lost": "faulty_gpu", "Network/link down": "network", "Power/PSU": "psu"},
    signals={"GPU/lost": "gpu_lost"},
)
# (node, start day, end day, fault type)
INCIDENTS = [
    (3, 10.8, 20.0, "Power/PSU/failed"),  # fills md000's one-host capacity until day 20
    *[(1, d, d + 0.5, "GPU/lost/-") for d in (10.0, 11.0, 12.0)],  # 3rd lost GPU: an RMA while node-1 is out
    *[(2, d, d, "GPU/lost/-") for d in (13.0, 14.0, 15.0)],  # zero-length; its RMA waits for room (day 20)
    *[
        (n, 30.0 + i, 40.0, "Network/link down/port 1") for i, n in enumerate((9, 10, 11))
    ],  # three of eight out: past the failure buffer (2) from day 32
    *[(12, d, d + 0.1, "GPU/lost/-") for d in (33.0, 33.2, 33.4)],  # its RMA waits for the halt to end
    (16, 50.0, 50.0, "GPU/lost/-"),  # the minimal zero-length case
    (5, 60.0, 60.0, "Power/PSU/failed"),
]


def trace_csv(path: Path) -> Path:
    lines = ["node_id,time,event,fault_type"]
    for node, start, end, kind in INCIDENTS:
        lines += [f"{node},{start},start,{kind}", f"{node},{end},end,{kind}"]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def settings(kafka: KafkaCluster, tmp_path: Path) -> Settings:
    s = with_own_lake(isolated_settings(kafka.settings), str(tmp_path / "lake"))
    admin.create_topics(s)
    return s


def domain_of(node: int) -> str:
    """The import lays out the hosts the history names, in natural order, DOMAIN_SIZE per domain."""
    named = sorted({n for n, *_ in INCIDENTS})
    return f"imported-md{named.index(node) // DOMAIN_SIZE:03d}"


def out_intervals(start_ms: int, actions: list[dict[str, Any]]) -> dict[str, list[tuple[str, int, int]]]:
    """Per domain, (host, from, to) while a host is out: the history's incidents and the planner's work."""
    out: dict[str, list[tuple[str, int, int]]] = {}
    for node, start, end, _ in INCIDENTS:
        out.setdefault(domain_of(node), []).append(
            (f"node-{node}", start_ms + round(start * DAY), start_ms + round(end * DAY))
        )
    began: dict[str, int] = {}
    for a in actions:
        p = a["payload"]
        if p["kind"] == "drain_requested":
            began[a["host_id"]] = a["ts"]
        elif p["kind"] == "returned":
            out.setdefault(p["maintenance_domain"], []).append(
                (a["host_id"], began.pop(a["host_id"]), a["ts"])
            )
    return out


def out_at(intervals: list[tuple[str, int, int]], t: int, but: str) -> int:
    return len({h for h, lo, hi in intervals if lo <= t < hi and h != but})


def test_the_planner_follows_a_real_shaped_history(settings: Settings, tmp_path: Path) -> None:
    start_ms = parse_start((dt.datetime.now(dt.UTC) - dt.timedelta(days=100)).date().isoformat())
    summary = run_import(settings, trace_csv(tmp_path / "trace.csv"), MAPPING, start_ms=start_ms)
    assert (summary.incidents, summary.bad_rows) == (len(INCIDENTS), [])  # zero-length incidents pair
    signals = sum(1 for *_, kind in INCIDENTS if kind.startswith("GPU/lost"))
    assert summary.hardware_sent == signals

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
            return actions if {"node-1", "node-2", "node-12"} <= returned and resumed else None

        actions = wait_for(planned, 120, "the planner's work on the whole history")
        # no host out after its last incident ended: none out for an incident, none in the planner's work
        for node in sorted({n for n, *_ in INCIDENTS}):
            host = worker.get_json(f"/hosts/node-{node}")
            assert (host["status"], host["out_for"]) == ("in_service", []), host
    finally:
        assert worker.stop() == 0, (tmp_path / "w.log").read_text()[-3000:]

    policy = load_policy()
    capacity = budget(DOMAIN_SIZE, policy.planner.capacity_buffer_pct)
    failure_budget = budget(DOMAIN_SIZE, policy.planner.failure_buffer_pct)
    intervals = out_intervals(start_ms, actions)
    kinds = [(a["host_id"], a["payload"]["kind"], a["ts"]) for a in actions]

    # no finding deferred while its domain had room at that event time, checked against the history
    delays = []
    for host, kind, deferred_ts in kinds:
        if kind != "deferred":
            continue
        dom = domain_of(int(host.split("-")[1]))
        released = next(ts for h, k, ts in kinds if h == host and k == "released" and ts >= deferred_ts)
        changes = sorted(
            {t for _, lo, hi in intervals[dom] for t in (lo, hi) if deferred_ts <= t <= released}
        )
        room = next(t for t in [deferred_ts, *changes] if out_at(intervals[dom], t, host) < capacity)
        delays.append(released - room)
    assert len(delays) == 2 and max(delays) == 0, delays  # node-2 and node-12
    # node-1 was out for the very fault its RMA is for while node-3 filled the capacity: it took none,
    # so it waited for none
    (flagged,) = [ts for h, k, ts in kinds if h == "node-1" and k == "suspected"]
    assert out_at(intervals[domain_of(1)], flagged, "node-1") >= capacity
    assert ("node-1", "rma_opened", flagged) in kinds
    print(f"deferral delay after room: {delays} ms over {len(delays)} deferred findings")

    # a halt while a domain is over its failure buffer: when its third link went down (day 32)
    halts = [
        (a["payload"]["maintenance_domain"], a["payload"]["kind"], a["ts"])
        for a in actions
        if a["payload"]["kind"].startswith("train_")
    ]
    over = start_ms + 32 * DAY
    assert (domain_of(9), "train_halted", over) in halts, halts
    assert out_at(intervals[domain_of(9)], over, "-") > failure_budget

    Archiver(settings).run(until_idle=True, max_seconds=60)
    faults = load_faults(settings.lake.path).collect()
    assert faults.height == len(INCIDENTS)  # one fault per incident, its generated signal linked to it
