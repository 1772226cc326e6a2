"""A made-up history in the shape of public fault traces, and what it must do to the pipeline.

Shape: JSON lines, one per start or end of an incident, node id, time in relative days, a nested
three-level fault type (``fault_type.category/type/detail``), zero-length incidents (start and end at
one time), and an inventory file that lists fault-free hosts too. It holds the repeat patterns a
fleet's history shows and the host-level rules must flag (``PATTERNS``).

Checked against the history itself, never against the planner's own account:
``host_repeats`` finds where each host-level rule's definition is met by the imported signals,
``deferral_delays`` when a deferred finding's domain had room. The integration test
(tests/integration/test_import_planner_history.py) and ``bench/bench_history_recall.py`` share them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from producers.importer import HistoryMapping
from producers.importer.mapping import Columns, InventoryDefaults
from streams.core.classify import classify
from streams.core.findings import Finding
from streams.core.policy import Policy, RepeatRule
from streams.core.repeat import state_keys

DAY = 86_400_000
# (node, domain); nodes 20-27 and 40-42 have no incident at all: only the inventory file names them
LAYOUT = {
    **{n: "md-a" for n in (1, 2, 3, 5, 20, 21, 22, 23)},
    **{n: "md-b" for n in (9, 10, 11, 12, 24, 25, 26, 27)},
    **{n: "md-c" for n in (16, 30, 31, 32, 33, 40, 41, 42)},
}
DOMAIN_SIZE = 8
GPU_LOST, PSU, LINK_DOWN = ("GPU", "lost", "-"), ("Power", "PSU", "failed"), ("Network", "link down", "-")
# (node, start day, end day, fault type)
INCIDENTS: list[tuple[int, float, float, tuple[str, str, str]]] = [
    (3, 10.8, 20.0, PSU),  # fills md-a's one-host capacity until day 20
    *[(1, d, d + 0.5, GPU_LOST) for d in (10.0, 11.0, 12.0)],  # its RMA while node-1 is out for it
    *[(2, d, d, GPU_LOST) for d in (13.0, 14.0, 15.0)],  # zero-length; its RMA waits for room (day 20)
    *[
        (n, 30.0 + i, 40.0, LINK_DOWN) for i, n in enumerate((9, 10, 11))
    ],  # 3 of 8 out: past the failure buffer (2) from day 32
    *[(12, d, d + 0.1, GPU_LOST) for d in (33.0, 33.2, 33.4)],  # its RMA waits for the halt to end
    (16, 50.0, 50.0, GPU_LOST),  # the minimal zero-length case
    *[(1, d, d + 0.2, GPU_LOST) for d in (50.0, 50.5)],  # node-1 flagged again, 39 days after its RMA
    (5, 60.0, 60.0, PSU),
    *[
        (30, d, d + 0.2, ("NIC", "GID table", "corrupt")) for d in (70.0, 71.5, 73.0)
    ],  # 3 NIC faults in 3 days
    (31, 80.0, 80.3, GPU_LOST),  # three different GPU faults in 4.7 days
    (31, 82.0, 82.2, ("GPU", "DBE", "uncorrectable")),
    (31, 84.7, 85.0, ("GPU", "SRAM", "uncorrectable")),
    *[
        (32, d, d + 0.5, ("PCIe", "width", "x8 of x16")) for d in (90.0, 95.0, 100.0, 105.0)
    ],  # 4 PCIe width faults
    *[(33, d, d + 1.0, LINK_DOWN) for d in (110.0, 120.0, 135.0)],  # 3 link downs in 28 days
]
DAYS = 150  # the history starts this many days before the import
MAPPING = HistoryMapping(
    columns=Columns(
        host="node_id",
        time="time",
        event="event",
        source_class=("fault_type.category", "fault_type.type", "fault_type.detail"),
    ),
    inventory=InventoryDefaults(host_prefix="node-", domain_size=DOMAIN_SIZE, cluster="trace"),
    causes={
        "GPU/lost": "faulty_gpu",
        "GPU/DBE": "hbm3",
        "GPU/SRAM": "gpu_sram",
        "Network/link down": "network",
        "Power/PSU": "psu",
        "NIC": "nic",
        "PCIe": "pcie",
    },
    signals={
        "GPU/lost": "gpu_lost",
        "GPU/DBE": "dram_uce",
        "GPU/SRAM": "sram_uce",
        "Network/link down": "link_down",
        "NIC": "component_fault",
        "PCIe": "component_fault",
    },
)


@dataclass(frozen=True, slots=True)
class Pattern:
    """A repeat the issue names: ``node`` must be flagged between ``first`` and ``last`` day."""

    name: str
    node: int
    first: float
    last: float
    escalated: bool = False


PATTERNS = (
    Pattern("3 NIC faults in 3 days", 30, 70.0, 73.0),
    Pattern("three different GPU faults in 4.7 days", 31, 80.0, 84.7),
    Pattern("4 PCIe width faults", 32, 90.0, 105.0),
    Pattern("3 link downs in 28 days", 33, 110.0, 135.0),
    Pattern("RMA'd, returned, flagged again 39 days later", 1, 50.0, 50.5, escalated=True),
)


def host(node: int) -> str:
    return f"node-{node}"


def domain_of(host_id: str) -> str:
    return LAYOUT[int(host_id.split("-")[1])]


def write_files(folder: Path) -> tuple[Path, Path]:
    """(the trace, JSON lines; the inventory file, CSV) written in ``folder``."""
    rows = []
    for node, start, end, (category, kind, detail) in INCIDENTS:
        fault = {"category": category, "type": kind, "detail": detail}
        rows += [
            {"node_id": node, "time": start, "event": "start", "fault_type": fault},
            {"node_id": node, "time": end, "event": "end", "fault_type": fault},
        ]
    trace, hosts = folder / "trace.jsonl", folder / "hosts.csv"
    trace.write_text("".join(json.dumps(r) + "\n" for r in rows))
    lines = ["host,rack,domain,cluster,fabric"] + [
        f"{n},r-{d},{d},trace,roce" for n, d in sorted(LAYOUT.items())
    ]
    hosts.write_text("\n".join(lines) + "\n")
    return trace, hosts


# -- host-level repeats, at the rules' own definitions ------------------------------------------------


@dataclass(frozen=True, slots=True)
class Repeat:
    """A host-level rule's definition met on a host: its first counted event to the one that met it."""

    rule: str
    host_id: str
    start: int
    end: int


def host_repeats(hardware: Iterable[Mapping[str, Any]], policy: Policy) -> list[Repeat]:
    """Where each host-level rule (count >= 2) is met by the signals, each rule on its own: N events
    of its classes (that many different ones for a multi-symptom rule) within its window; a repeat
    starts the count afresh. No consumption across rules: the definition, not the detector."""
    counted: dict[tuple[str, str], list[tuple[int, str, int]]] = {}
    rules: dict[str, RepeatRule] = {}
    for record in sorted(hardware, key=lambda r: (r["ts"], r["event_id"])):
        signal = classify(record, policy)
        if signal is None:
            continue
        for rule, _ in state_keys(signal, policy).values():
            if rule.scope == "host" and rule.count >= 2:
                rules[rule.name] = rule
                counted.setdefault((rule.name, signal.host_id), []).append(
                    (signal.ts, signal.error_class, signal.weight)
                )
    found: list[Repeat] = []
    for (name, host_id), events in sorted(counted.items()):
        rule = rules[name]
        window: list[tuple[int, str, int]] = []
        for ts, klass, weight in events:
            window = [e for e in window if e[0] >= ts - rule.window] + [(ts, klass, weight)]
            if (
                sum(w for *_, w in window) >= rule.count
                and len({k for _, k, _ in window}) >= rule.distinct_classes
            ):
                found.append(Repeat(name, host_id, window[0][0], ts))
                window = []
    return found


def recall(repeats: list[Repeat], findings: Iterable[Finding]) -> tuple[int, int]:
    """(repeats flagged, repeats): flagged when the host has a finding raised within the repeat
    (by that rule, or by another that took the same events first)."""
    by_host: dict[str, list[int]] = {}
    for f in findings:
        by_host.setdefault(f.host_id, []).append(f.ts)
    hit = sum(1 for r in repeats if any(r.start <= t <= r.end for t in by_host.get(r.host_id, [])))
    return hit, len(repeats)


# -- capacity, from the history and the planner's work ------------------------------------------------

Interval = tuple[str, int, int]  # (host, out from, back at)


def out_intervals(start_ms: int, actions: Iterable[Mapping[str, Any]]) -> dict[str, list[Interval]]:
    """Per domain, (host, from, to) while a host is out: the history's incidents and the planner's work
    (first drain to ``returned``) from its action records."""
    out: dict[str, list[Interval]] = {}
    for node, start, end, _ in INCIDENTS:
        out.setdefault(LAYOUT[node], []).append(
            (host(node), start_ms + round(start * DAY), start_ms + round(end * DAY))
        )
    began: dict[str, int] = {}
    for a in sorted(actions, key=lambda a: a["ts"]):
        kind = a["payload"]["kind"]
        if kind == "drain_requested":
            began.setdefault(a["host_id"], a["ts"])
        elif kind == "returned":
            out.setdefault(a["payload"]["maintenance_domain"], []).append(
                (a["host_id"], began.pop(a["host_id"]), a["ts"])
            )
    return out


def out_at(intervals: list[Interval], t: int, but: str) -> int:
    """Hosts other than ``but`` out at ``t``."""
    return len({h for h, lo, hi in intervals if lo <= t < hi and h != but})


def deferral_delays(
    intervals: dict[str, list[Interval]], actions: Iterable[Mapping[str, Any]], capacity: int
) -> dict[str, int]:
    """Per deferred operation (host@time), ms from the first moment its domain had room (other hosts
    out below ``capacity``) to its release, at the event times where who is out changes."""
    kinds = [(a["host_id"], a["payload"]["kind"], a["ts"]) for a in sorted(actions, key=lambda a: a["ts"])]
    delays = {}
    for h, kind, deferred in kinds:
        if kind != "deferred":
            continue
        found = intervals[domain_of(h)]
        released = next(ts for x, k, ts in kinds if x == h and k == "released" and ts >= deferred)
        changes = sorted({t for _, lo, hi in found for t in (lo, hi) if deferred <= t <= released})
        room = next(t for t in [deferred, *changes] if out_at(found, t, h) < capacity)
        delays[f"{h}@{deferred}"] = released - room
    return delays
