"""A campaign's timeline from the fold (pure): hosts per version over time, capacity out per domain, halts.

The version a host runs moves when its change is applied (and back when a rollback's is); a host is
out for the change from its request to its verification. Steps (halts with their evidence, the gate,
a person's pause or abort) come from the campaign's history, with those of its rollback.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass
from typing import Any

from streams.trains.campaign import Campaign, Trains


@dataclass(frozen=True, slots=True)
class Point:
    ts: int
    versions: dict[str, int]  # version -> hosts on it (of those the campaign or its rollback changed)
    out: dict[str, int]  # domain -> hosts out for the change then


def rollbacks(trains: Trains, camp: Campaign) -> list[Campaign]:
    return sorted(
        (c for c in trains.campaigns.values() if c.rollback_of == camp.campaign_id),
        key=lambda c: c.started_ts,
    )


def timeline(trains: Trains, camp: Campaign, every_ms: int, until: int) -> list[Point]:
    """The campaign's state every ``every_ms`` from its start to ``until`` (and at ``until``)."""
    moves: list[tuple[int, str, str]] = []  # (applied ts, host, version then)
    spans: list[tuple[int, int, str]] = []  # (out from, out until, domain)
    for c in [camp, *rollbacks(trains, camp)]:
        for host_id, v in c.visits.items():
            if v.applied_ts is not None:
                moves.append((v.applied_ts, host_id, c.version))
            if v.requested_ts is not None:
                spans.append((v.requested_ts, v.done_ts if v.done_ts is not None else until + 1, v.domain))
    moves.sort()
    previous = {h: v.previous or "?" for h, v in camp.visits.items() if v.requested_ts is not None}
    points = []
    times = [*range(camp.started_ts, until, max(1, every_ms)), until]
    for t in times:
        now = dict(previous)
        for ts, host_id, version in moves:
            if ts > t:
                break
            now[host_id] = version
        out = Counter(domain for start, end, domain in spans if start <= t < end)
        points.append(Point(t, dict(sorted(Counter(now.values()).items())), dict(sorted(out.items()))))
    return points


def steps(trains: Trains, camp: Campaign) -> list[dict[str, Any]]:
    """The campaign's and its rollbacks' steps in time order, each with its reason (a halt's evidence)."""
    out = [
        {"ts": ts, "campaign_id": c.campaign_id, "step": step, "reason": reason}
        for c in [camp, *rollbacks(trains, camp)]
        for ts, step, reason in c.history
    ]
    return sorted(out, key=lambda s: (s["ts"], s["campaign_id"]))


def render(trains: Trains, camp: Campaign, points: list[Point]) -> str:
    """The timeline as text: one line a point (versions, domains out and the most out in one), then the steps."""
    lines = [f"campaign {camp.campaign_id}: {camp.component} -> {camp.version}, {camp.status}"]
    for p in points:
        versions = ", ".join(f"{v}: {n}" for v, n in p.versions.items()) or "-"
        most = max(p.out.values(), default=0)
        lines.append(
            f"  {_iso(p.ts)}  {versions}  | out: {sum(p.out.values())} hosts in {len(p.out)} domains"
            f" (at most {most} in one)"
        )
    lines.append("steps:")
    for s in steps(trains, camp):
        lines.append(
            f"  {_iso(s['ts'])}  {s['campaign_id']}  {s['step']}"
            + (f": {s['reason']}" if s["reason"] else "")
        )
    return "\n".join(lines)


def _iso(ts: int) -> str:
    return dt.datetime.fromtimestamp(ts / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M")
