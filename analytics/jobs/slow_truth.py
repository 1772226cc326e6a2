"""Which of the truth's slow hosts a detector must find: fixed by the truth and a materiality setting.

A slow host is *material* when it was slower by at least ``min_slowdown`` for at least ``min_share``
of the time it ran a job after its onset, and for at least ``min_slow_ms`` in all: slow enough, often
enough and long enough to cost a synchronous job. Nothing here reads a detection policy, so two
policies compared on one run are judged against the same hosts (recall cannot rise with a threshold).
Every scorer (``fleetpulse score``, backtest, bench, the analytics report's truth check) uses it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

MINUTE_MS = 60_000
Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Materiality:
    """The evaluation's definition of a slow host that matters (not the policy's)."""

    min_slowdown: float = 0.02
    min_share: float = 0.30
    min_slow_ms: int = 30 * MINUTE_MS

    def describe(self) -> str:
        return (f"materiality: slow by ≥ {self.min_slowdown:.0%} in ≥ {self.min_share:.0%} of its busy time "
                f"after onset, ≥ {self.min_slow_ms / MINUTE_MS:g} min of it (not the policy)")  # fmt: skip


@dataclass(frozen=True, slots=True)
class SlowTruth:
    """One truth slow host judged by materiality: how much of its busy time it was slow, and why (not) material."""

    host_id: str
    cause: str
    factor: float
    share: float
    slow_ms: int
    material: bool
    reason: str


def spans_by(rows: Sequence[Mapping[str, Any]], key: str) -> dict[str, list[Span]]:
    """``[start_ts, end_ts)`` spans per value of ``key`` (a job slot, a host)."""
    out: dict[str, list[Span]] = {}
    for r in rows:
        out.setdefault(str(r[key]), []).append((int(r["start_ts"]), int(r["end_ts"])))
    return out


def overlap(a: Sequence[Span], b: Sequence[Span]) -> list[Span]:
    """The stretches of time in both ``a`` and ``b`` (each a list of [start, end))."""
    out = [(max(x0, y0), min(x1, y1)) for x0, x1 in a for y0, y1 in b]
    return sorted((lo, hi) for lo, hi in out if lo < hi)


def _length(spans: Sequence[Span]) -> int:
    return sum(hi - lo for lo, hi in _merged(spans))


def _merged(spans: Sequence[Span]) -> list[Span]:
    out: list[Span] = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def judge_slow_hosts(
    hosts: pl.DataFrame,
    start: int,
    end: int,
    jobs: Sequence[Mapping[str, Any]] = (),
    episodes: Sequence[Mapping[str, Any]] = (),
    materiality: Materiality | None = None,
) -> list[SlowTruth]:
    """Every truth slow host (``slow_cause`` set) of ``hosts.parquet``, judged by materiality over [start, end].

    ``jobs`` (the truth's job runs: slot, start_ts, end_ts; a host's ``job_id`` is its slot) say when a
    host was busy (an idle host has no step time: its slowness costs no job); without them it is busy
    throughout. ``episodes`` (host_id, start_ts, end_ts) say when it was slow; without them a persistent
    host is slow from onset and an intermittent one for its duty's share.
    """
    m = materiality or Materiality()
    runs, slow_at = spans_by(jobs, "slot"), spans_by(episodes, "host_id")
    out = []
    for h in hosts.filter(pl.col("slow_cause").is_not_null()).to_dicts():
        onset = max(h["slow_onset_ts"] if h["slow_onset_ts"] is not None else start, start)
        after = [(onset, end)] if onset < end else []
        busy = overlap(runs.get(str(h.get("job_id")), []), after) if runs else after
        factor = float(h.get("slow_factor") or 0.0)
        if slow_at:
            slow = overlap(busy, slow_at.get(h["host_id"], []))
            slow_ms = _length(slow)
        else:
            duty = float(h.get("slow_duty") or 1.0) if h.get("slow_intermittent") else 1.0
            slow_ms = int(_length(busy) * duty)
        busy_ms = _length(busy)
        share = slow_ms / busy_ms if busy_ms else 0.0
        material, reason = _verdict(factor, share, slow_ms, busy_ms, m)
        out.append(SlowTruth(h["host_id"], h["slow_cause"], factor, share, slow_ms, material, reason))
    return out


def _verdict(factor: float, share: float, slow_ms: int, busy_ms: int, m: Materiality) -> tuple[bool, str]:
    if not busy_ms:
        return False, "ran no job after its onset"
    if factor < m.min_slowdown:
        return False, f"{factor:.1%} slower, under {m.min_slowdown:.0%}"
    if share < m.min_share:
        return False, f"slow in {share:.0%} of its busy time, under {m.min_share:.0%}"
    if slow_ms < m.min_slow_ms:
        return False, f"slow for {slow_ms / MINUTE_MS:.0f} min, under {m.min_slow_ms / MINUTE_MS:g}"
    return True, f"{factor:.1%} slower in {share:.0%} of its busy time"


def material_hosts(truths: Sequence[SlowTruth]) -> set[str]:
    return {t.host_id for t in truths if t.material}
