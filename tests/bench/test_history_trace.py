"""The trace-shaped history's own checks: repeats at the rules' definitions, recall, deferral delay."""

from __future__ import annotations

from pathlib import Path

from bench import history_trace as trace
from producers.importer.run import plan_import
from streams.core.findings import Finding
from streams.core.policy import load_policy

START = 1_767_225_600_000
DAY = trace.DAY


def finding(host: str, ts: int) -> Finding:
    return Finding("f", "repeat_offender", "r", "host", host, host, "trace", ts, "x", 2, ts - DAY, ts, "rma")


def test_every_named_pattern_is_a_repeat_at_the_rules_definitions_and_recall_counts_findings(
    tmp_path: Path,
) -> None:
    path, hosts = trace.write_files(tmp_path)
    plan = plan_import(path, trace.MAPPING, start_ms=START, inventory=hosts)
    assert (plan.summary.incidents, plan.summary.bad_rows, len(plan.inventory)) == (30, [], len(trace.LAYOUT))
    repeats = trace.host_repeats(plan.hardware, load_policy(None))
    for p in trace.PATTERNS:
        lo, hi = START + round(p.first * DAY), START + round(p.last * DAY)
        assert any(r.host_id == trace.host(p.node) and lo <= r.end <= hi for r in repeats), p.name
    # node-2's three zero-length lost GPUs in 3 days: the 30-day rule is met once, at the second
    (node2,) = [r for r in repeats if r.host_id == "node-2" and r.rule == "fell_off_bus_repeat_host_unknown"]
    assert (node2.start, node2.end) == (START + 13 * DAY, START + 14 * DAY)
    assert trace.recall(repeats, []) == (0, len(repeats))
    assert trace.recall(repeats, [finding("node-2", START + 14 * DAY)])[0] >= 1
    assert trace.recall(repeats, [finding("node-2", START + 16 * DAY)])[0] == 0  # after the repeat: missed


def test_deferral_delay_is_measured_from_the_first_room_in_the_history() -> None:
    t = START + 14 * DAY  # node-3 out (day 10.8 to 20) fills md-a's one-host capacity
    actions = [
        {"host_id": "node-2", "ts": t, "payload": {"kind": "deferred", "maintenance_domain": "md-a"}},
        {
            "host_id": "node-2",
            "ts": START + 21 * DAY,
            "payload": {"kind": "released", "maintenance_domain": "md-a"},
        },
    ]
    delays = trace.deferral_delays(trace.out_intervals(START, actions), actions, capacity=1)
    assert delays == {f"node-2@{t}": DAY}  # room at day 20, released a day late
