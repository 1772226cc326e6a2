"""Slow-host scoring: detectable when k detector windows of the slowdown fit before the end,
windows counted per segment of a continued run, time to detect also in the windows the host was
busy (ran a job) while slow.

An intermittent host is slow only in its episodes, and a window averages its samples: a window
the host spent partly well shows a fraction of its slowdown. Such a host is detectable only when
k of some n consecutive windows show at least the policy's ``min_slowdown``, as the detector asks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from fleetpulse.evaluation.report import DetectorScore, assemble, first_findings, pct

DEFAULT_WINDOW_S = 60.0


@dataclass(frozen=True, slots=True)
class WindowPeriod:
    """From ``start_ts`` to ``end_ts`` the slow-host detector's windows last ``window_s``.

    A run continued in another mode (fast-forward history, then live) has one period per segment:
    its sample interval, and so the detector's effective window, changes at the boundary.
    """

    start_ts: int
    end_ts: int
    window_s: float


def windows_between(a: int, b: int, periods: Sequence[WindowPeriod]) -> float:
    """Detector windows elapsed from ``a`` to ``b`` (ms; negative if ``b < a``).

    Time before the first period counts in its window, time after the last in the last's.
    """
    if b < a:
        return -windows_between(b, a, periods)
    total = 0.0
    for i, p in enumerate(periods):
        lo = p.start_ts if i else min(p.start_ts, a)
        hi = p.end_ts if i < len(periods) - 1 else max(p.end_ts, b)
        total += max(0, min(b, hi) - max(a, lo)) / (p.window_s * 1000)
    return total


@dataclass(frozen=True, slots=True)
class SlowRule:
    """The detector's slow-host rule: ``k`` of ``n`` consecutive windows at least ``min_slowdown`` slower."""

    k: int
    n: int | None = None  # None: k windows anywhere
    min_slowdown: float = 0.0


def window_edges(a: int, b: int, periods: Sequence[WindowPeriod]) -> np.ndarray:
    """Start of each detector window from ``a`` to ``b`` (ms), each period's windows laid from its start,
    then ``b``: ``edges[i]`` to ``edges[i + 1]`` is one window (a partial one at either end)."""
    starts: list[np.ndarray] = [np.array([a], dtype=np.int64)]
    for p in periods:
        step = max(1, int(p.window_s * 1000))
        lo, hi = max(a, p.start_ts), min(b, p.end_ts)
        if lo < hi:
            first = p.start_ts + -(-(lo - p.start_ts) // step) * step
            starts.append(np.arange(first, hi, step, dtype=np.int64))
    edges = np.unique(np.concatenate([*starts, np.array([b], dtype=np.int64)]))
    return edges[(edges >= a) & (edges <= b)]


def slow_share(edges: np.ndarray, spans: Sequence[tuple[int, int]]) -> np.ndarray:
    """Per window (between consecutive ``edges``), the share of it inside ``spans`` (sorted, not overlapping)."""
    xs, ys, total = [], [], 0
    for lo, hi in sorted(spans):
        xs += [lo, hi]
        ys += [total, total + (hi - lo)]
        total += hi - lo
    if not xs:
        return np.zeros(len(edges) - 1)
    inside = np.interp(edges, xs, ys)
    return np.diff(inside) / np.maximum(np.diff(edges), 1)


def reaches_rule(factor: float, onset: int, end: int, spans: Sequence[tuple[int, int]],
                 periods: Sequence[WindowPeriod], rule: SlowRule) -> bool:  # fmt: skip
    """Whether a host ``factor`` slower within ``spans`` shows it in ``rule.k`` of ``rule.n`` windows."""
    edges = window_edges(onset, end, periods)
    if len(edges) < 2:
        return False
    share = slow_share(edges, spans)
    strong = (share > 0) & (factor * share >= rule.min_slowdown)
    n = rule.n or len(strong)
    best = np.convolve(strong.astype(int), np.ones(min(n, len(strong)), dtype=int), "valid").max()
    return bool(best >= rule.k)


def score_slow_host(
    findings: pl.DataFrame,
    hosts: pl.DataFrame,
    start: int,
    end: int,
    k: int,
    window_s: float | None,
    periods: Sequence[WindowPeriod] = (),
    jobs: Sequence[Mapping[str, Any]] = (),
    episodes: Sequence[Mapping[str, Any]] = (),
    *,
    n: int | None = None,
    min_slowdown: float = 0.0,
) -> DetectorScore:
    """Slow hosts detectable when ``k`` windows of the slowdown fit before the end and the slowdown reaches
    ``min_slowdown`` (in an intermittent host's windows: in ``k`` of ``n`` of them; see the module).

    ``periods`` (a continued run's segments) give the window per stretch of time and override
    ``window_s``; times to detect are then counted in the windows of the periods they span.
    ``jobs`` (the truth's job runs: slot, start_ts, end_ts) and ``episodes`` (when each slow host
    was slow: host_id, start_ts, end_ts) also give the time to detect counted in the windows the host
    ran a job while slow: an idle host has no step time, an intermittent one off is not slow.
    """
    rule = SlowRule(k, n, min_slowdown)
    if periods:
        return _score_slow_host(findings, hosts, start, end, rule, list(periods), "segments", jobs, episodes)
    source = "argument"
    if window_s is None:
        spans = findings.filter(pl.col("detector") == "slow_host")
        if {"window_start", "window_end"} <= set(spans.columns) and spans.height:
            window_s = float((spans["window_end"] - spans["window_start"]).median()) / 1000  # type: ignore[arg-type]
            source = "findings"
        if not window_s:
            window_s, source = DEFAULT_WINDOW_S, "default"
    return _score_slow_host(
        findings, hosts, start, end, rule, [WindowPeriod(start, end, window_s)], source, jobs, episodes
    )


def overlap(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The stretches of time in both ``a`` and ``b`` (each a list of [start, end))."""
    out = [(max(x0, y0), min(x1, y1)) for x0, x1 in a for y0, y1 in b]
    return sorted((lo, hi) for lo, hi in out if lo < hi)


def busy_windows(a: int, b: int, spans: Sequence[tuple[int, int]], periods: Sequence[WindowPeriod]) -> float:
    """Detector windows from ``a`` to ``b`` that fall in ``spans`` ([start, end))."""
    return sum(windows_between(max(a, lo), min(b, hi), periods) for lo, hi in spans if lo < b and hi > a)


def _score_slow_host(
    findings: pl.DataFrame,
    hosts: pl.DataFrame,
    start: int,
    end: int,
    rule: SlowRule,
    periods: list[WindowPeriod],
    source: str,
    jobs: Sequence[Mapping[str, Any]] = (),
    episodes: Sequence[Mapping[str, Any]] = (),
) -> DetectorScore:
    first = first_findings(findings, "slow_host")
    slow = hosts.filter(pl.col("slow_cause").is_not_null()).to_dicts()
    truth = {h["host_id"] for h in slow}
    detectable: set[str] = set()
    breakdown: dict[str, dict[str, int]] = {}
    ttd: list[float] = []
    windows: list[float] = []
    busy: list[float] = []
    runs, slow_at = _spans(jobs, "slot"), _spans(episodes, "host_id")
    for h in slow:
        row = breakdown.setdefault(h["slow_cause"], {"truth": 0, "detectable": 0, "found": 0})
        row["truth"] += 1
        onset = max(h["slow_onset_ts"] if h["slow_onset_ts"] is not None else start, start)
        if _detectable(h, onset, end, periods, rule, slow_at.get(h["host_id"])):
            detectable.add(h["host_id"])
            row["detectable"] += 1
        if h["host_id"] in first:
            row["found"] += 1
            ttd.append((first[h["host_id"]] - onset) / 1000)
            windows.append(windows_between(onset, first[h["host_id"]], periods))
            if (runs or slow_at) and first[h["host_id"]] >= onset:
                always = [(onset, first[h["host_id"]])]
                spans = overlap(
                    runs.get(str(h.get("job_id"))) or always if runs else always,
                    slow_at.get(h["host_id"]) or always if slow_at else always,
                )
                busy.append(busy_windows(onset, first[h["host_id"]], spans, periods))
    fp_hosts = sorted(set(first) - truth)
    return assemble(
        "slow_host",
        first,
        truth,
        detectable,
        fp_hosts,
        ttd,
        breakdown,
        ttd_median_windows=pct(windows, 50),
        ttd_p90_windows=pct(windows, 90),
        ttd_busy_median_windows=pct(busy, 50),
        ttd_busy_p90_windows=pct(busy, 90),
        window_s=periods[-1].window_s,
        window_source=source if len(periods) == 1 else f"{source}: {_window_chain(periods)}",
    )


def _detectable(host: Mapping[str, Any], onset: int, end: int, periods: list[WindowPeriod], rule: SlowRule,
                episodes: Sequence[tuple[int, int]] | None) -> bool:  # fmt: skip
    if onset > end or windows_between(onset, end, periods) < rule.k:
        return False
    factor = float(host.get("slow_factor") or 0.0)
    if host.get("slow_intermittent") and episodes:
        return reaches_rule(factor, onset, end, episodes, periods, rule)
    return factor >= rule.min_slowdown if host.get("slow_factor") is not None else True


def _spans(rows: Sequence[Mapping[str, Any]], key: str) -> dict[str, list[tuple[int, int]]]:
    out: dict[str, list[tuple[int, int]]] = {}
    for r in rows:
        out.setdefault(str(r[key]), []).append((int(r["start_ts"]), int(r["end_ts"])))
    return out


def _window_chain(periods: Sequence[WindowPeriod]) -> str:
    return " → ".join(f"{p.window_s:g} s" for p in periods)
