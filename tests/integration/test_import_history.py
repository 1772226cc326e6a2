"""A made-up fault trace in the shape of public ones, imported end to end on the real broker.

Shape: node id, time in days from the trace's start, start/end events, a three-level fault type.
Checks: counts, coverage, unknown hosts inventoried, idempotent re-import, the planner halting a
train because imported outages exhaust a domain's failure buffer, the measured repair times
against hand-computed medians, and operators' steps over the detector's HTTP endpoint.
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
import subprocess
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaProducer

from ground.kafka import admin
from ground.launch import child_env, fleetpulse_argv
from producers.importer import HistoryMapping, run_import
from producers.importer.incidents import parse_start
from producers.importer.mapping import Columns, InventoryDefaults
from streams.core.findings import Finding
from streams.core.messages import PlanFinding, to_wire
from streams.worker import spawn_worker
from tests.conftest import free_ports
from tests.streams.kafka_io import decoded, isolated_settings, wait_for

pytestmark = pytest.mark.integration

HOUR = 3_600_000
TOKEN = secrets.token_urlsafe(32)  # detect refuses a weak operator token at start
MAPPING = HistoryMapping(
    columns=Columns(host="node_id", time="time", event="event", source_class="fault_type"),
    inventory=InventoryDefaults(host_prefix="node-", domain_size=8, cluster="trace"),
    causes={"GPU/DBE": "hbm3", "GPU/lost": "faulty_gpu", "Network/link down": "network", "Power/PSU": "psu"},
)
# (node, start day, end day or None, fault type). The 13 nodes are new to the fleet: the import lays
# them out 8 per domain in natural order, so imported-md000 holds nodes 2-6 and 17-19.
INCIDENTS = [
    (17, 1.0, 1.5, "GPU/DBE/over threshold"),  # hbm3 12 h
    (18, 2.0, 3.0, "GPU/DBE/over threshold"),  # hbm3 24 h
    (19, 4.0, 4.25, "GPU/DBE/over threshold"),  # hbm3 6 h
    (20, 5.0, 5.125, "Network/link down/port 1"),  # network 3 h
    (21, 6.0, 6.5, "Network/link down/port 2"),  # network 12 h
    (22, 7.0, 8.0, "Misc/unknown error/-"),  # unclassified 24 h
    (23, 8.0, 8.5, "Power/PSU/failed"),  # psu 12 h
    *[(n, 29.0, None, "GPU/lost/-") for n in range(2, 7)],  # 5 of md000's 8 hosts still out
    (32, 10.0, 10.5, "Network/link down/port 1"),  # network 12 h
]
# hand-computed: medians of the closed durations per cause; p90 by linear interpolation
EXPECTED_REPAIR_H = {
    "hbm3": (12.0, 21.6),
    "network": (12.0, 12.0),
    "psu": (12.0, 12.0),
    "unclassified": (24.0, 24.0),
}


def trace_csv(path: Path) -> Path:
    lines = ["node_id,time,event,fault_type"]
    for node, start, end, kind in INCIDENTS:
        lines.append(f"{node},{start},start,{kind}")
        if end is not None:
            lines.append(f"{node},{end},end,{kind}")
    lines.append("2,29.0,start,GPU/lost/-")  # a duplicate row
    lines.append("7,soon,start,GPU/lost/-")  # an unparseable time
    path.write_text("\n".join(lines) + "\n")
    return path


def post(url: str, body: dict[str, Any], token: str | None) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": "application/json"} | ({"Authorization": f"Bearer {token}"} if token else {})
    req = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:  # noqa: S310 (loopback only)
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def out_elsewhere(worker: Any) -> int:
    return int({d["domain"]: d for d in worker.get_json("/domains")}["imported-md000"]["out_elsewhere"])


@pytest.fixture
def settings(kafka):  # type: ignore[no-untyped-def]
    s = isolated_settings(kafka.settings)
    admin.create_topics(s)
    return s


def test_import_a_fault_trace_end_to_end(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    start = (now - dt.timedelta(days=30)).isoformat()
    path = trace_csv(tmp_path / "trace.csv")

    first = run_import(settings, path, MAPPING, start_ms=parse_start(start))
    assert (first.incidents, first.classified, first.sent, first.already_imported) == (13, 12, 13, 0)
    assert first.by_cause == {"faulty_gpu": 5, "hbm3": 3, "network": 3, "unclassified": 1, "psu": 1}
    assert first.unmapped_classes == [("Misc/unknown error/-", 1)]
    assert [(b.number, b.reason.split(" ")[0]) for b in first.bad_rows] == [(24, "unparseable")]
    assert first.duplicate_rows == [(23, 16)]
    assert len(first.new_hosts) == 13 and "node-2" in first.new_hosts  # each got an inventory record

    again = run_import(settings, path, MAPPING, start_ms=parse_start(start))
    assert (again.sent, again.already_imported, again.new_hosts) == (0, 13, [])
    assert again.hardware_sent == 0 and first.hardware_sent == first.hardware
    on_kafka = decoded(settings, "actions")
    assert Counter(r["event_type"] for r in on_kafka) == {"IncidentReported": 13}
    inventory = [r["payload"]["maintenance_domain"] for r in decoded(settings, "inventory")]
    assert Counter(inventory) == {"imported-md000": 8, "imported-md001": 5}

    (port,) = free_ports(1)
    worker = spawn_worker(
        settings,
        web_port=port,
        data_dir=tmp_path / "w",
        log_path=tmp_path / "w.log",
        extra_env={"FLEETPULSE_DETECT__OPS_TOKEN": TOKEN},
    )
    try:
        worker.wait_ready(60)
        # every worker folds the whole log: wait until this one has the 13 incidents
        wait_for(lambda: worker.get_json("/health")["actions_applied"] >= 13, 30, "the incidents folded")
        domains = {d["domain"]: d for d in worker.get_json("/domains")}["imported-md000"]
        assert (domains["out"], domains["out_elsewhere"], domains["failing"], domains["size"]) == (5, 5, 5, 8)

        (outage,) = worker.get_json("/hosts/node-4")["out_for"]
        assert (outage["source"], outage["cause"], outage["end_ts"]) == ("incident", "faulty_gpu", None)

        repairs = {r["cause"]: r for r in worker.get_json("/repair-times")}
        got = {c: (r["median_ms"] / HOUR, round(r["p90_ms"] / HOUR, 6)) for c, r in repairs.items()}
        assert got == EXPECTED_REPAIR_H

        # a new failure in md000 (5 of 8 out, failure buffer 2) must not drain: the train is halted
        ts = int(now.timestamp() * 1000)
        finding = Finding(
            finding_id="fnd-import-test",
            detector="repeat_offender",
            rule="dram_uce_repeat_gpu",
            scope="gpu",
            scope_key="node-17/0",
            host_id="node-17",
            cluster="trace",
            ts=ts,
            error_class="dram_uce",
            count=2,
            window_start=ts - 24 * HOUR,
            window_end=ts,
            recommended_action="rma",
        )
        # as the errors stage hands a finding to its domain's planner (the planner topic is JSON)
        planned = json.dumps(to_wire(PlanFinding("imported-md000", finding.to_record()))).encode()
        producer = KafkaProducer(**settings.kafka.kafka_python(settings.bootstrap_servers), acks="all")
        try:
            producer.send(f"{settings.detect.app_id}-planner", key=b"imported-md000", value=planned)
            producer.flush(30)
        finally:
            producer.close()
        kinds = wait_for(
            lambda: (
                [
                    r["payload"]["kind"]
                    for r in decoded(settings, "actions")
                    if r["event_type"] == "MaintenanceActionRecorded"
                ]
                if len(decoded(settings, "actions")) >= 13 + 3
                else None
            ),
            40,
            "the planner's actions",
        )
        # the train halted when the five outages took md000 past its buffer (day 29 of the trace), before
        # the finding came: the planner moves at every capacity change, not only at findings
        assert kinds == ["train_halted", "suspected", "deferred"], kinds

        url = f"http://127.0.0.1:{port}/ops/events"
        step = {"host_id": "node-2", "kind": "returned_to_service", "actor": "dc-tech", "ticket_id": "T-1"}
        assert post(url, step, None)[0] == 401
        assert post(url, step, "wrong")[0] == 401
        assert post(url, {"host_id": "node-2", "kind": "vanished", "actor": "x"}, TOKEN)[0] == 400
        status, body = post(url, step, TOKEN)
        assert status == 202 and body["known_host"] is True
        wait_for(lambda: out_elsewhere(worker) == 4, 20, "node-2 back in service")

        # the same step from the shell: fleetpulse ops record
        argv = fleetpulse_argv(
            "ops", "record", "node-3", "returned_to_service", "--actor", "dc-tech", "--ticket", "T-2"
        )
        done = subprocess.run(argv, env=child_env(settings), capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "recorded returned_to_service on node-3" in done.stdout
        wait_for(lambda: out_elsewhere(worker) == 3, 20, "node-3 back in service")
    finally:
        assert worker.stop() == 0, (tmp_path / "w.log").read_text()[-3000:]


# An inventory file: 6 hosts in two racks and two domains, 3 of them fault-free (no incident at all).
HOSTS_CSV = """node_id,rack,domain,cluster,fabric,install_date
40,r1,md-a,trace,roce,-400
41,r1,md-a,trace,roce,-400
42,r1,md-a,trace,roce,-400
43,r2,md-b,trace,infiniband,-200
44,r2,md-b,trace,infiniband,-200
45,r2,md-b,trace,infiniband,-200
"""
# node 40: a PSU failing twice in 10 days (psu_repeat_host); node 41: 3 link downs on different ports in
# 24 days (link_down_repeat_host_long). Node 50 is not in the file: it gets the default layout.
LAYOUT_TRACE = [
    (40, 5.0, 5.5, "Power/PSU/failed"),
    (40, 15.0, 15.5, "Power/PSU/failed"),
    (41, 2.0, 2.25, "Network/link down/port 1"),
    (41, 13.0, 13.25, "Network/link down/port 2"),
    (41, 26.0, 26.25, "Network/link down/port 3"),
    (50, 3.0, 3.5, "GPU/lost/-"),
]
LAYOUT_MAPPING = HistoryMapping(
    columns=Columns(host="node_id", time="time", event="event", source_class="fault_type"),
    inventory=InventoryDefaults(host_prefix="node-", domain_size=8, cluster="trace"),
    causes={"GPU/lost": "faulty_gpu", "Network/link down": "network", "Power/PSU": "psu"},
    signals={"GPU/lost": "gpu_lost", "Network/link down": "link_down", "Power": "component_fault"},
)


def test_an_inventory_file_lays_out_fault_free_hosts_and_host_rules_fire(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    start_ms = parse_start((now - dt.timedelta(days=30)).isoformat())
    hosts = tmp_path / "hosts.csv"
    hosts.write_text(HOSTS_CSV.replace("node_id", "host"))
    trace = tmp_path / "trace.csv"
    lines = ["node_id,time,event,fault_type"]
    for node, begin, end, kind in LAYOUT_TRACE:
        lines += [f"{node},{begin},start,{kind}", f"{node},{end},end,{kind}"]
    trace.write_text("\n".join(lines) + "\n")

    first = run_import(settings, trace, LAYOUT_MAPPING, start_ms=start_ms, inventory=hosts)
    assert (first.sent, first.hardware_sent) == (6, 6)
    assert first.inventory is not None and (first.inventory.listed, first.inventory.fault_free) == (6, 4)
    layout = {r["host_id"]: r["payload"] for r in decoded(settings, "inventory")}
    assert sorted(layout) == ["node-40", "node-41", "node-42", "node-43", "node-44", "node-45", "node-50"]
    assert (layout["node-44"]["rack"], layout["node-44"]["maintenance_domain"]) == (
        "r2",
        "md-b",
    )  # fault-free
    assert layout["node-44"]["install_ts"] == start_ms - 200 * 86_400_000
    assert layout["node-50"]["rack"] == "imported"
    again = run_import(settings, trace, LAYOUT_MAPPING, start_ms=start_ms, inventory=hosts)
    assert (again.sent, again.hardware_sent, again.inventory and again.inventory.records) == (0, 0, 0)
    assert Counter(r["event_type"] for r in decoded(settings, "errors")) == {
        "ComponentFaultObserved": 2,
        "LinkEventObserved": 3,
        "XidRaised": 1,
    }

    (port,) = free_ports(1)
    worker = spawn_worker(settings, web_port=port, data_dir=tmp_path / "w", log_path=tmp_path / "w.log")
    try:
        worker.wait_ready(60)
        rules = wait_for(
            lambda: found if len(found := worker.get_json("/findings")) >= 2 else None, 60, "two findings"
        )
        assert sorted((f["host_id"], f["rule"]) for f in rules) == [
            ("node-40", "psu_repeat_host"),
            ("node-41", "link_down_repeat_host_long"),
        ]
        assert [f["host_id"] for f in worker.get_json("/findings?host=node-40")] == ["node-40"]
        domains = {d["domain"]: d["size"] for d in worker.get_json("/domains")}
        assert (domains["md-a"], domains["md-b"]) == (3, 3)  # fault-free hosts count in their domain
    finally:
        assert worker.stop() == 0, (tmp_path / "w.log").read_text()[-3000:]
