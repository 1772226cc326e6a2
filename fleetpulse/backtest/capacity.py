"""Capacity a policy would have taken: hosts out per maintenance domain per day, peaks, halts and RMAs.

A host is out for the planner from ``drain_requested`` until ``returned`` (a hand-over keeps it out);
incidents and operators' steps (``streams.core.fleet.outages``) keep hosts out too, whatever the policy, so the
totals show both. Intervals are half-open ``[start, end)`` in event-time ms, clipped to the period.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import polars as pl

from streams.core.actions import Action
from streams.core.fleet.outages import Outages

DAY_MS = 86_400_000
Interval = tuple[int, int]


@dataclass(frozen=True, slots=True)
class CapacityImpact:
    """The capacity side of a backtest (``daily``: one row per domain and day with a host out)."""

    drained_host_days: float  # planner's drains only: what the policy costs
    outage_host_days: float  # incidents and operators' steps: the same under every policy
    peak_out: int  # most hosts out at once fleet-wide, planner and outages together
    peak_drained: int  # most hosts out at once for the planner's work
    peak_domain_out: int  # most hosts out at once in one maintenance domain (both causes)
    trains_halted: int
    rmas_opened: int
    drains: int
    daily: pl.DataFrame

    def summary(self) -> dict[str, float | int]:
        return {
            "drained_host_days": round(self.drained_host_days, 4),
            "outage_host_days": round(self.outage_host_days, 4),
            "peak_out": self.peak_out,
            "peak_drained": self.peak_drained,
            "peak_domain_out": self.peak_domain_out,
            "trains_halted": self.trains_halted,
            "rmas_opened": self.rmas_opened,
            "drains": self.drains,
        }


def drained_intervals(actions: Iterable[Action], end: int) -> dict[str, list[Interval]]:
    """Per host, the spans the planner had it out (still out at ``end``: until ``end``)."""
    since: dict[str, int] = {}
    out: dict[str, list[Interval]] = {}
    for action in sorted(actions, key=lambda a: (a.ts, a.action_id)):
        if action.kind == "drain_requested" and action.host_id not in since:
            since[action.host_id] = action.ts
        elif action.kind == "returned" and action.host_id in since:
            out.setdefault(action.host_id, []).append((since.pop(action.host_id), action.ts))
    for host, start in since.items():
        out.setdefault(host, []).append((start, max(start, end)))
    return out


def outage_intervals(outages: Outages, start: int, end: int) -> dict[str, list[Interval]]:
    """Per host, incidents and operators' steps overlapping ``[start, end)``, clipped to it."""
    out: dict[str, list[Interval]] = {}
    for host, found in outages.by_host.items():
        for o in found.values():
            lo, hi = max(o.start_ts, start), min(o.end_ts if o.end_ts is not None else end, end)
            if lo < hi:
                out.setdefault(host, []).append((lo, hi))
    return out


def merged(*sources: Mapping[str, list[Interval]]) -> dict[str, list[Interval]]:
    """Per host, the union of its intervals from every source (a host out twice over counts once)."""
    out: dict[str, list[Interval]] = {}
    for host in sorted({h for s in sources for h in s}):
        spans = sorted(i for s in sources for i in s.get(host, []))
        joined: list[Interval] = []
        for lo, hi in spans:
            if joined and lo <= joined[-1][1]:
                joined[-1] = (joined[-1][0], max(joined[-1][1], hi))
            else:
                joined.append((lo, hi))
        out[host] = joined
    return out


def peak(intervals: Mapping[str, list[Interval]]) -> int:
    """Most intervals open at once (an end and a start at the same instant do not overlap)."""
    edges = sorted(
        (t, d) for spans in intervals.values() for lo, hi in spans if hi > lo for t, d in ((lo, 1), (hi, -1))
    )
    best = current = 0
    for _, delta in edges:
        current += delta
        best = max(best, current)
    return best


def host_days(intervals: Mapping[str, list[Interval]]) -> float:
    return sum(hi - lo for spans in intervals.values() for lo, hi in spans) / DAY_MS


def daily(
    drained: Mapping[str, list[Interval]],
    outages: Mapping[str, list[Interval]],
    domain_of: Callable[[str], str],
) -> pl.DataFrame:
    """Hosts out at some time of each day per domain: for the planner, for outages, and either."""
    counts: dict[tuple[str, int], Counter[str]] = {}
    for label, source in (("drained", drained), ("outage", outages), ("out", merged(drained, outages))):
        for host, spans in source.items():
            days = {d for lo, hi in spans for d in range(lo // DAY_MS, (hi - 1) // DAY_MS + 1)}
            for day in days:
                counts.setdefault((domain_of(host), day), Counter())[label] += 1
    rows = [
        {"domain": dom, "day": day, "drained": c["drained"], "outage": c["outage"], "out": c["out"]}
        for (dom, day), c in sorted(counts.items())
    ]
    schema = {"domain": pl.Utf8, "day": pl.Int64, "drained": pl.Int64, "outage": pl.Int64, "out": pl.Int64}
    frame = pl.DataFrame(rows, schema=schema)
    return frame.with_columns(pl.from_epoch(pl.col("day") * DAY_MS, time_unit="ms").dt.date().alias("day"))


def capacity_impact(
    actions: list[Action], outages: Outages, start: int, end: int, domain_of: Callable[[str], str]
) -> CapacityImpact:
    """The capacity a policy's actions took over ``[start, end)``, beside what outages took anyway."""
    drained = drained_intervals(actions, end)
    away = outage_intervals(outages, start, end)
    both = merged(drained, away)
    by_domain: dict[str, dict[str, list[Interval]]] = {}
    for host, spans in both.items():
        by_domain.setdefault(domain_of(host), {})[host] = spans
    kinds = Counter(a.kind for a in actions)
    return CapacityImpact(
        drained_host_days=host_days(drained),
        outage_host_days=host_days(away),
        peak_out=peak(both),
        peak_drained=peak(drained),
        peak_domain_out=max((peak(d) for d in by_domain.values()), default=0),
        trains_halted=kinds["train_halted"],
        rmas_opened=kinds["rma_opened"],
        drains=kinds["drain_requested"],
        daily=daily(drained, away, domain_of),
    )
