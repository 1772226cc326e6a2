"""Which of the truth's slow hosts a detector must find: fixed by the truth and a materiality setting.

A slow host is *material* when it was slower by at least ``min_slowdown`` in at least ``min_share`` of
its windows (the evaluation's windows, never finer than the samples: a sample averages what it
covers) from its onset on, counting only windows it ran a job in, and for at least ``min_slow_ms`` in
all: slow enough, often enough and long enough to cost a synchronous job. Nothing here reads a
detection policy, so two policies compared on one run are judged against the same hosts (recall
cannot rise with a threshold). Every scorer (``fleetpulse score``, backtest, bench, the analytics
report's truth check) uses it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

MINUTE_MS = 60_000
Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Materiality:
    """The evaluation's definition of a slow host that matters (not the policy's)."""

    min_slowdown: float = 0.02
    min_share: float = 0.30
    min_slow_ms: int = 30 * MINUTE_MS
    window_ms: int = 5 * MINUTE_MS  # widened to the sample interval where samples are longer

    def describe(self) -> str:
        return (
            f"materiality: slow by ≥ {self.min_slowdown:.0%} in ≥ {self.min_share:.0%} of its "
            f"{self.window_ms / MINUTE_MS:g}-min windows with a job after onset (or sample-long ones), "
            f"≥ {self.min_slow_ms / MINUTE_MS:g} min in all; not the policy's"
        )


@dataclass(frozen=True, slots=True)
class Resolution:
    """From ``start_ts`` to ``end_ts`` the samples came every ``interval_s`` (a continued run has several)."""

    start_ts: int
    end_ts: int
    interval_s: float


@dataclass(frozen=True, slots=True)
class SlowTruth:
    """One truth slow host judged by materiality: how much of its busy time it was slow, and why (not) material."""

    host_id: str
    cause: str
    factor: float
    share: float  # of its windows with a job after onset, those slow by ≥ min_slowdown
    slow_ms: int  # time slow while running a job
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


def _cumulative(spans: Sequence[Span]) -> tuple[list[int], list[int]]:
    """Knots of the time inside ``spans`` as a function of time (for ``np.interp``)."""
    xs, ys, total = [], [], 0
    for lo, hi in _merged(spans):
        xs += [lo, hi]
        ys += [total, total + hi - lo]
        total += hi - lo
    return xs, ys


def _inside(edges: np.ndarray, spans: Sequence[Span]) -> np.ndarray:
    """Per window between consecutive ``edges``, the time of it inside ``spans``."""
    xs, ys = _cumulative(spans)
    if not xs:
        return np.zeros(len(edges) - 1)
    return np.diff(np.interp(edges, xs, ys))


def _merged(spans: Sequence[Span]) -> list[Span]:
    out: list[Span] = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def window_edges(a: int, b: int, window_ms: int, resolutions: Sequence[Resolution]) -> np.ndarray:
    """Window starts from ``a`` to ``b`` then ``b``; a window lasts ``window_ms`` or the sample interval of
    its stretch of time when longer, laid from that stretch's start."""
    stretches = [(r.start_ts, r.end_ts, max(window_ms, int(r.interval_s * 1000))) for r in resolutions]
    if not stretches:
        stretches = [(a, b, window_ms)]
    starts = [np.array([a, b], dtype=np.int64)]
    for i, (lo0, hi0, step) in enumerate(stretches):
        lo = max(a, lo0) if i else a
        hi = min(b, hi0) if i < len(stretches) - 1 else b
        if lo < hi:
            first = lo0 + -(-(lo - lo0) // step) * step
            starts.append(np.arange(first, hi, step, dtype=np.int64))
    edges = np.unique(np.concatenate(starts))
    return edges[(edges >= a) & (edges <= b)]


def judge_slow_hosts(
    hosts: pl.DataFrame,
    start: int,
    end: int,
    jobs: Sequence[Mapping[str, Any]] = (),
    episodes: Sequence[Mapping[str, Any]] = (),
    materiality: Materiality | None = None,
    resolutions: Sequence[Resolution] = (),
) -> list[SlowTruth]:
    """Every truth slow host (``slow_cause`` set) of ``hosts.parquet``, judged by materiality over [start, end].

    ``jobs`` (the truth's job runs: slot, start_ts, end_ts; a host's ``job_id`` is its slot) say when a
    host was busy (an idle host has no step time: its slowness costs no job); without them it is busy
    throughout. ``episodes`` (host_id, start_ts, end_ts) say when it was slow; without them a slow
    host is slow from onset (an intermittent one for its duty's share of each window).
    ``resolutions`` give the sample interval per stretch of time (default: no coarser than the windows).
    """
    m = materiality or Materiality()
    runs, slow_at = spans_by(jobs, "slot"), spans_by(episodes, "host_id")
    out = []
    for h in hosts.filter(pl.col("slow_cause").is_not_null()).to_dicts():
        onset = max(h["slow_onset_ts"] if h["slow_onset_ts"] is not None else start, start)
        factor = float(h.get("slow_factor") or 0.0)
        after = [(onset, end)] if onset < end else []
        busy = overlap(runs.get(str(h.get("job_id")), []), after) if runs else after
        slow = overlap(busy, slow_at.get(h["host_id"], [])) if slow_at else busy
        duty = 1.0 if slow_at or not h.get("slow_intermittent") else float(h.get("slow_duty") or 1.0)
        if not busy:
            out.append(
                SlowTruth(h["host_id"], h["slow_cause"], factor, 0.0, 0, False, "ran no job after its onset")
            )
            continue
        edges = window_edges(onset, end, m.window_ms, resolutions)
        busy_ms, slow_ms = _inside(edges, busy), _inside(edges, slow) * duty
        mine = busy_ms > 0
        shows = factor * slow_ms[mine] / busy_ms[mine]  # what a window's mean step time shows
        share = float((shows >= m.min_slowdown).mean()) if mine.any() else 0.0
        total = int(slow_ms.sum())
        material, reason = _verdict(factor, share, total, m)
        out.append(SlowTruth(h["host_id"], h["slow_cause"], factor, share, total, material, reason))
    return out


def _verdict(factor: float, share: float, slow_ms: int, m: Materiality) -> tuple[bool, str]:
    if factor < m.min_slowdown:
        return False, f"{factor:.1%} slower, under {m.min_slowdown:.0%}"
    if share < m.min_share:
        return False, f"≥ {m.min_slowdown:.0%} slower in {share:.0%} of its windows, under {m.min_share:.0%}"
    if slow_ms < m.min_slow_ms:
        return False, f"slow for {slow_ms / MINUTE_MS:.0f} min, under {m.min_slow_ms / MINUTE_MS:g}"
    return True, f"{factor:.1%} slower in {share:.0%} of its windows"


def resolutions_of(manifest: Mapping[str, Any]) -> list[Resolution]:
    """The sample interval per stretch of a run, from a truth manifest (per segment of a continued run)."""
    segments = manifest.get("segments") or []
    if segments:
        return [
            Resolution(int(s["start_ts"]), int(s["end_ts"]), float(s.get("sample_interval_s") or 0))
            for s in segments
        ]
    interval = manifest.get("sample_interval_s")
    if isinstance(interval, int | float) and "start_ts" in manifest and "end_ts" in manifest:
        return [Resolution(int(manifest["start_ts"]), int(manifest["end_ts"]), float(interval))]
    return []


def material_hosts(truths: Sequence[SlowTruth]) -> set[str]:
    return {t.host_id for t in truths if t.material}
