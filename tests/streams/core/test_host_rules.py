"""Host-level rules per cause, multi-symptom and long-window, fed by an imported fault trace.

The patterns a public trace of 400 servers showed the rules missing: 3 NIC faults in 3 days on one
host, three different GPU faults in 4.7 days, 4 PCIe width faults, 3 link downs in 28 days.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from producers.importer import load_mapping, plan_import
from producers.importer.incidents import parse_start
from producers.importer.mapping import EXAMPLE_MAPPING
from schemas import Codec
from streams.core.classify import classify
from streams.core.findings import Finding
from streams.core.policy import Policy, load_policy, parse_policy
from streams.core.repeat import observe

START = parse_start("2024-01-01")
# (node, start day, fault type), each incident ending an hour later
TRACE = [
    # 3 NIC faults in 3 days: a GID table error twice and a lost NIC, no port named
    (1, 10.0, "Network/NIC GID table/error"),
    (1, 11.0, "Network/NIC lost/-"),
    (1, 12.9, "Network/NIC GID table/error"),
    # three different GPU faults in 4.7 days, none naming its GPU
    (2, 20.0, "GPU/DBE/over threshold"),
    (2, 22.0, "GPU/lost/-"),
    (2, 24.7, "GPU/SBE/storm"),
    # 4 PCIe width faults over two months
    (3, 5.0, "PCIe/width low/x8"),
    (3, 20.0, "PCIe/width low/x8"),
    (3, 40.0, "PCIe/width low/x4"),
    (3, 55.0, "PCIe/width low/x8"),
    # 3 link downs in 28 days (each 12 days apart: no 7-day rule sees two)
    (4, 1.0, "Network/link down/port 1"),
    (4, 13.0, "Network/link down/port 2"),
    (4, 26.0, "Network/link down/port 1"),
    # a PSU failing twice in a month
    (5, 3.0, "Power/PSU/failed"),
    (5, 30.0, "Power/PSU/failed"),
    # one of each on a healthy host: nothing
    (6, 1.0, "PCIe/width low/x8"),
    (6, 40.0, "Power/PSU/failed"),
    (6, 80.0, "Fan/failed/3"),
]


def findings(tmp_path: Path, trace: list[tuple[int, float, str]], policy: Policy) -> list[Finding]:
    lines = ["node_id,time,event,fault_type"]
    for node, day, kind in trace:
        lines += [f"{node},{day},start,{kind}", f"{node},{day + 1 / 24},end,{kind}"]
    path = tmp_path / "trace.csv"
    path.write_text("\n".join(lines) + "\n")
    plan = plan_import(path, load_mapping(EXAMPLE_MAPPING), start_ms=START)
    codec, found = Codec(), []
    per_host: dict[str, dict] = {}
    for record in sorted(plan.hardware, key=lambda r: r["ts"]):
        signal = classify(codec.decode(codec.encode(record)).record, policy)
        if signal is None:
            continue
        table = per_host.setdefault(signal.host_id, {})
        states, finding = observe(signal, table, policy)
        table.update(states)
        found += [finding] if finding else []
    return found


@pytest.fixture(scope="module")
def policy() -> Policy:
    return load_policy()


def test_the_missed_patterns_of_a_real_trace_are_flagged(tmp_path: Path, policy: Policy) -> None:
    found = {(f.host_id, f.rule, f.recommended_action) for f in findings(tmp_path, TRACE, policy)}
    assert ("node-1", "nic_repeat_host", "nic_replacement") in found
    assert {h for h, *_ in found} == {"node-1", "node-2", "node-3", "node-4", "node-5"}
    assert ("node-2", "gpu_multi_symptom_host", "rma") in found
    assert ("node-3", "pcie_repeat_host", "diagnostics") in found
    assert ("node-4", "link_down_repeat_host_long", "cable_replacement") in found
    assert ("node-5", "psu_repeat_host", "diagnostics") in found


def test_three_nic_faults_in_three_days_are_a_nic_replacement(tmp_path: Path, policy: Policy) -> None:
    """A GID table error three times: no lost NIC, yet the adapter is sick."""
    trace = [(1, d, "Network/NIC GID table/error") for d in (10.0, 11.0, 12.9)]
    assert [(f.rule, f.count) for f in findings(tmp_path, trace, policy)] == [("nic_repeat_host", 3)]
    assert findings(tmp_path, trace[:2], policy) == []


def test_four_pcie_width_faults_flag_twice(tmp_path: Path, policy: Policy) -> None:
    trace = [(3, d, "PCIe/width low/x8") for d in (5.0, 20.0, 40.0, 55.0)]
    assert [f.rule for f in findings(tmp_path, trace, policy)] == ["pcie_repeat_host", "pcie_repeat_host"]


def test_multi_symptom_needs_different_classes(tmp_path: Path) -> None:
    """distinct_classes: three faults of one class are not three symptoms."""
    data = {
        "classes": [
            {"name": "a", "event_type": "ComponentFaultObserved", "causes": ["psu"]},
            {"name": "b", "event_type": "ComponentFaultObserved", "causes": ["fan"]},
        ],
        "rules": [
            {
                "name": "multi",
                "classes": ["a", "b"],
                "scope": "host",
                "count": 3,
                "window": "7d",
                "action": "diagnostics",
                "distinct_classes": 2,
            },
        ],
    }
    policy = parse_policy(data)
    same = [(7, d, "Power/PSU/failed") for d in (1.0, 2.0, 3.0)]
    assert findings(tmp_path, same, policy) == []
    mixed = [*same[:2], (7, 3.0, "Fan/failed/1")]
    assert [(f.rule, f.count) for f in findings(tmp_path, mixed, policy)] == [("multi", 3)]
