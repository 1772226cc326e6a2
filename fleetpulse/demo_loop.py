"""The demo's closed-loop figures: pages per true incident by the alert that opened them, findings per true lemon.

Measured against the simulator's own truth (its lemons and slow hosts, fixed by the seed; the fleet's
repairs), never a set the policy under test defines: an incident is a truth host's persistent fault, and
again each time the host came back from a repair that did not cure it (``fleetpulse.evaluation.incidents``),
counted when it got at least one page; its pages are the alert groups (``streams.alerts``: one group per
operation that took the host out) that first fired in it.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import polars as pl

from fleetpulse.evaluation.incidents import incident_of, relapses_of
from fleetpulse.evaluation.sources import training_by_segment
from schemas import FLEET


def truth_hosts(segments: list[Path]) -> tuple[set[str], set[str]]:
    """(lemons, slow hosts) of the run's truth: the history's hosts table (a continuation keeps the fleet)."""
    hosts = segments[0] / "hosts.parquet"
    if not hosts.exists():
        return set(), set()
    frame = pl.read_parquet(hosts, columns=["host_id", "lemon_kind", "slow_cause"])
    lemons = set(frame.filter(pl.col("lemon_kind").is_not_null())["host_id"].to_list())
    slow = set(frame.filter(pl.col("slow_cause").is_not_null())["host_id"].to_list())
    return lemons, slow


def segment_jobs(segments: list[Path]) -> list[dict[str, Any]]:
    """Each closed-loop segment's jobs (ETTR, goodput, losses: its manifest's ``closed_loop.jobs``), with its days."""
    manifests = [json.loads(p.read_text()) for p in (f / "manifest.json" for f in segments) if p.exists()]
    jobs: list[dict[str, Any]] = training_by_segment(manifests).get("jobs_by_segment", [])
    return jobs


def fleet_relapses(segments: list[Path]) -> dict[str, list[int]]:
    """The fleet's returns from repairs that did not cure: the last segment's answer folds the whole run."""
    manifests = [json.loads(p.read_text()) for p in (f / "manifest.json" for f in segments) if p.exists()]
    return relapses_of(next((m["closed_loop"] for m in reversed(manifests) if m.get("closed_loop")), None))


def loop_figures(
    segments: list[Path], findings: Iterable[dict[str, Any]], alerts: Iterable[dict[str, Any]]
) -> dict[str, Any]:
    """``findings``/``alerts``: decoded Finding and AlertRaised records of the run."""
    lemons, slow = truth_hosts(segments)
    true_hosts = lemons | slow
    per_host = Counter(r["host_id"] for r in findings)
    found = [per_host[h] for h in sorted(lemons) if per_host[h]]
    relapses = fleet_relapses(segments)
    groups: dict[tuple[str, str], tuple[str, int]] = {}  # (host, group) -> the alert that opened it, when
    for r in sorted(alerts, key=lambda r: r["ts"]):
        p = r["payload"]
        if p["status"] != "firing" or r["host_id"] == FLEET:
            continue
        key = (r["host_id"], p["labels"].get("group_key") or p["alert_id"])
        groups.setdefault(key, (f"{p['alertname']}/{p['labels'].get('rule') or '-'}", r["ts"]))
    per_incident: defaultdict[tuple[str, int], int] = defaultdict(int)
    by_rule: Counter[str] = Counter()
    for (host, _), (opened_by, ts) in groups.items():
        if host in true_hosts:
            per_incident[host, incident_of(relapses, host, ts)] += 1
            by_rule[opened_by] += 1
    n = len(per_incident)
    hosts = {host for host, _ in per_incident}
    return {
        "true_lemons": len(lemons),
        "true_slow_hosts": len(slow),
        "lemons_found": len(found),
        "findings_per_lemon_median": statistics.median(found) if found else None,
        "findings_per_lemon_max": max(found, default=None),
        "incidents_paged": n,
        "pages_on_incidents": sum(per_incident.values()),
        "relapses_paged": sum(1 for _, i in per_incident if i),
        "hosts_paged": len(hosts),
        "pages_per_true_incident": round(sum(per_incident.values()) / n, 3) if n else None,
        "pages_per_paged_host": round(sum(per_incident.values()) / len(hosts), 3) if hosts else None,
        "max_pages_per_incident": max(per_incident.values(), default=0),
        "pages_by_opening_alert": dict(by_rule.most_common()),
        "pages_elsewhere": sum(1 for host, _ in groups if host not in true_hosts),
    }
