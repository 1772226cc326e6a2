"""Slow-host scoring: the hosts to be found are the truth's material slow hosts
(``analytics.jobs.slow_truth``: slow by ≥ 2 % in ≥ 30 % of its busy time after onset), whatever the
policy under test; times to detect in detector windows, per segment of a continued run, and also in
the windows the host was busy (ran a job) while slow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from analytics.jobs.slow_truth import (
    Materiality,
    Resolution,
    judge_slow_hosts,
    material_hosts,
    overlap,
    spans_by,
)
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
    window_s: float | None,
    periods: Sequence[WindowPeriod] = (),
    jobs: Sequence[Mapping[str, Any]] = (),
    episodes: Sequence[Mapping[str, Any]] = (),
    *,
    materiality: Materiality | None = None,
    resolutions: Sequence[Resolution] = (),
) -> DetectorScore:
    """Slow hosts to be found (recall's denominator) are the material ones (``materiality``, by default
    ``Materiality()``); a finding on another truth slow host is a TP that was not required, one on a
    host the truth calls healthy a false positive.

    ``periods`` (a continued run's segments) give the window per stretch of time and override
    ``window_s``; times to detect are then counted in the windows of the periods they span.
    ``jobs`` (the truth's job runs: slot, start_ts, end_ts) and ``episodes`` (when each slow host
    was slow: host_id, start_ts, end_ts) also give the time to detect counted in the windows the host
    ran a job while slow: an idle host has no step time, an intermittent one off is not slow.
    ``resolutions`` (the run's sample intervals) keep the materiality's windows no finer than the samples.
    """
    rule = materiality or Materiality()
    if periods:
        return _score_slow_host(
            findings, hosts, start, end, rule, list(periods), "segments", jobs, episodes, resolutions
        )
    source = "argument"
    if window_s is None:
        spans = findings.filter(pl.col("detector") == "slow_host")
        if {"window_start", "window_end"} <= set(spans.columns) and spans.height:
            window_s = float((spans["window_end"] - spans["window_start"]).median()) / 1000  # type: ignore[arg-type]
            source = "findings"
        if not window_s:
            window_s, source = DEFAULT_WINDOW_S, "default"
    return _score_slow_host(
        findings,
        hosts,
        start,
        end,
        rule,
        [WindowPeriod(start, end, window_s)],
        source,
        jobs,
        episodes,
        resolutions,
    )


def busy_windows(a: int, b: int, spans: Sequence[tuple[int, int]], periods: Sequence[WindowPeriod]) -> float:
    """Detector windows from ``a`` to ``b`` that fall in ``spans`` ([start, end))."""
    return sum(windows_between(max(a, lo), min(b, hi), periods) for lo, hi in spans if lo < b and hi > a)


def _score_slow_host(
    findings: pl.DataFrame,
    hosts: pl.DataFrame,
    start: int,
    end: int,
    rule: Materiality,
    periods: list[WindowPeriod],
    source: str,
    jobs: Sequence[Mapping[str, Any]] = (),
    episodes: Sequence[Mapping[str, Any]] = (),
    resolutions: Sequence[Resolution] = (),
) -> DetectorScore:
    first = first_findings(findings, "slow_host")
    judged = {t.host_id: t for t in judge_slow_hosts(hosts, start, end, jobs, episodes, rule, resolutions)}
    truth = set(judged)
    detectable = material_hosts(list(judged.values()))
    breakdown: dict[str, dict[str, int]] = {}
    ttd: list[float] = []
    windows: list[float] = []
    busy: list[float] = []
    runs, slow_at = spans_by(jobs, "slot"), spans_by(episodes, "host_id")
    for h in hosts.filter(pl.col("slow_cause").is_not_null()).to_dicts():
        row = breakdown.setdefault(h["slow_cause"], {"truth": 0, "detectable": 0, "found": 0})
        row["truth"] += 1
        onset = max(h["slow_onset_ts"] if h["slow_onset_ts"] is not None else start, start)
        row["detectable"] += h["host_id"] in detectable
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
        truth_definition=rule.describe(),
    )


def _window_chain(periods: Sequence[WindowPeriod]) -> str:
    return " → ".join(f"{p.window_s:g} s" for p in periods)
