"""Slow-host scoring: detectable when k detector windows of the slowdown fit before the end,
windows counted per segment of a continued run, time to detect also in the windows the host was busy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

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


def score_slow_host(
    findings: pl.DataFrame,
    hosts: pl.DataFrame,
    start: int,
    end: int,
    k: int,
    window_s: float | None,
    periods: Sequence[WindowPeriod] = (),
    jobs: Sequence[Mapping[str, Any]] = (),
) -> DetectorScore:
    """Slow hosts detectable when ``k`` windows of the slowdown fit before the end.

    ``periods`` (a continued run's segments) give the window per stretch of time and override
    ``window_s``; times to detect are then counted in the windows of the periods they span.
    ``jobs`` (the truth's job runs: slot, start_ts, end_ts) also give the time to detect counted in
    the windows the host ran a job, since an idle host has no step time to be slow in.
    """
    if periods:
        return _score_slow_host(findings, hosts, start, end, k, list(periods), "segments", jobs)
    source = "argument"
    if window_s is None:
        spans = findings.filter(pl.col("detector") == "slow_host")
        if {"window_start", "window_end"} <= set(spans.columns) and spans.height:
            window_s = float((spans["window_end"] - spans["window_start"]).median()) / 1000  # type: ignore[arg-type]
            source = "findings"
        if not window_s:
            window_s, source = DEFAULT_WINDOW_S, "default"
    return _score_slow_host(
        findings, hosts, start, end, k, [WindowPeriod(start, end, window_s)], source, jobs
    )


def busy_windows(a: int, b: int, runs: Sequence[tuple[int, int]], periods: Sequence[WindowPeriod]) -> float:
    """Detector windows from ``a`` to ``b`` during which the host ran a job (``runs``: [start, end))."""
    if not runs:
        return windows_between(a, b, periods)
    return sum(windows_between(max(a, lo), min(b, hi), periods) for lo, hi in runs if lo < b and hi > a)


def _score_slow_host(
    findings: pl.DataFrame,
    hosts: pl.DataFrame,
    start: int,
    end: int,
    k: int,
    periods: list[WindowPeriod],
    source: str,
    jobs: Sequence[Mapping[str, Any]] = (),
) -> DetectorScore:
    first = first_findings(findings, "slow_host")
    slow = hosts.filter(pl.col("slow_cause").is_not_null()).to_dicts()
    truth = {h["host_id"] for h in slow}
    detectable: set[str] = set()
    breakdown: dict[str, dict[str, int]] = {}
    ttd: list[float] = []
    windows: list[float] = []
    busy: list[float] = []
    runs: dict[str, list[tuple[int, int]]] = {}
    for j in jobs:
        runs.setdefault(str(j["slot"]), []).append((int(j["start_ts"]), int(j["end_ts"])))
    for h in slow:
        row = breakdown.setdefault(h["slow_cause"], {"truth": 0, "detectable": 0, "found": 0})
        row["truth"] += 1
        onset = max(h["slow_onset_ts"] if h["slow_onset_ts"] is not None else start, start)
        if onset <= end and windows_between(onset, end, periods) >= k:
            detectable.add(h["host_id"])
            row["detectable"] += 1
        if h["host_id"] in first:
            row["found"] += 1
            ttd.append((first[h["host_id"]] - onset) / 1000)
            windows.append(windows_between(onset, first[h["host_id"]], periods))
            if runs and first[h["host_id"]] >= onset:
                busy.append(
                    busy_windows(onset, first[h["host_id"]], runs.get(str(h.get("job_id")), []), periods)
                )
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


def _window_chain(periods: Sequence[WindowPeriod]) -> str:
    return " → ".join(f"{p.window_s:g} s" for p in periods)
