"""Scores detector findings against the simulator's ground truth (precision, recall, time to detect).

Pure: ``score(findings, hosts, faults, manifest)`` takes frames shaped as in the truth
contract (``hosts.parquet``, ``faults.parquet``, ``manifest.json``) and the flat
FindingRaised table; reading them from Kafka or the lake is ``fleetpulse.evaluation.sources``'s job.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import polars as pl

from fleetpulse.evaluation.rule_met import ScopedRule, rule_met, threshold_reached_at
from ground.errors import FleetpulseError

DAY_MS = 86_400_000
DETECTORS = ("repeat_offender", "slow_host", "critical_fault")
DEFAULT_SLOW_K = 3
DEFAULT_WINDOW_S = 60.0


class ScoringError(FleetpulseError):
    """Truth or findings are missing or malformed (the message names the file or column)."""


@dataclass(frozen=True, slots=True)
class RepeatRule:
    """``count`` faults of ``kinds`` on one scope within ``window_ms`` make a lemon detectable."""

    kinds: tuple[str, ...]
    count: int
    window_ms: int


# DESIGN.md: >=2 DRAM UCE / 7 d, >=2 falls off the bus / 30 d, >=2 SRAM UCE / 7 d, >=3 flaps / 24 h on one
# port. A row-remap failure is not counted as a DRAM UCE: the detection policy classifies it apart (and
# acts on it at once, as detector "critical_fault").
DEFAULT_RULES: dict[str, RepeatRule] = {
    "dram_uce": RepeatRule(("dram_uce",), 2, 7 * DAY_MS),
    "fell_off_bus": RepeatRule(("fell_off_bus",), 2, 30 * DAY_MS),
    "sram_uce": RepeatRule(("sram_uce",), 2, 7 * DAY_MS),
    "link_flap": RepeatRule(("link_flap",), 3, DAY_MS),
}

# Faults the policy acts on at their first occurrence (its count-1 rules, detector "critical_fault").
DEFAULT_CRITICAL_KINDS: tuple[str, ...] = ("row_remap_failure",)


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


@dataclass(frozen=True)
class DetectorScore:
    detector: str
    truth: int  # hosts with the latent condition
    detectable: int  # ... whose signal could reach the rule within the period (recall's denominator)
    predicted: int  # hosts with at least one finding of this detector
    tp: int
    fp: int
    fn: int  # detectable hosts without a finding
    tp_undetectable: int  # found although the truth alone would not reach the threshold
    precision: float | None
    recall: float | None
    ttd_median_s: float | None  # first finding ts - onset (onset clipped to the period start)
    ttd_p90_s: float | None
    ttd_median_windows: float | None = None
    ttd_p90_windows: float | None = None
    # windows after onset in which the host ran a job (the truth's jobs): idle gaps not counted
    ttd_busy_median_windows: float | None = None
    ttd_busy_p90_windows: float | None = None
    window_s: float | None = None
    window_source: str | None = None
    lag_median_s: float | None = None  # first finding ts - moment the truth reached the threshold
    lag_p90_s: float | None = None
    rule_met: int | None = None  # healthy hosts flagged whose own faults do meet a rule: neither TP nor FP
    rule_met_hosts: list[str] = field(default_factory=list)
    fp_findings: int | None = None  # findings on FP hosts
    fp_per_day_per_1k_hosts: float | None = None  # fp_findings per day of the period per 1,000 hosts
    breakdown: dict[str, dict[str, int]] = field(default_factory=dict)
    fp_hosts: list[str] = field(default_factory=list)
    fn_hosts: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ScoreReport:
    detectors: dict[str, DetectorScore]
    period: dict[str, int]
    params: dict[str, Any]
    live: ScoreReport | None = None  # a history continued live: the live segment on its own

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; times to detect also in hours (``ttd_median_h``, ``ttd_p90_h``) for reports."""
        detectors = {}
        for name, d in self.detectors.items():
            row = asdict(d)
            for q in ("median", "p90"):
                seconds = row[f"ttd_{q}_s"]
                row[f"ttd_{q}_h"] = None if seconds is None else seconds / 3600
            detectors[name] = row
        out = {"detectors": detectors, "period": self.period, "params": self.params}
        if self.live is not None:
            out["live"] = self.live.to_dict()
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)


def _pct(values: list[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def _first_findings(findings: pl.DataFrame, detector: str) -> dict[str, int]:
    rows = findings.filter(pl.col("detector") == detector).group_by("host_id").agg(pl.col("ts").min())
    return dict(zip(rows["host_id"].to_list(), rows["ts"].to_list(), strict=True))


def _scoped_faults(
    faults: pl.DataFrame, host: Mapping[str, Any], rule: RepeatRule, start: int, end: int
) -> list[int]:
    """Fault times of the rule's kinds on the lemon's own scope (its GPU, its port, or the whole host)."""
    mine = faults.filter(pl.col("kind").is_in(rule.kinds) & pl.col("ts").is_between(start, end))
    scope = host.get("lemon_scope") or "host"
    if scope == "gpu" and host.get("lemon_gpu") is not None:
        mine = mine.filter(pl.col("gpu") == host["lemon_gpu"])
    elif scope == "port" and host.get("lemon_port") is not None:
        mine = mine.filter(pl.col("port") == host["lemon_port"])
    return mine["ts"].to_list()


def default_met_rules(rules: Mapping[str, RepeatRule]) -> list[ScopedRule]:
    """Without the policy's own rules: flap rules count per port, the others per host."""
    return [
        ScopedRule(r.kinds, "port" if "link_flap" in r.kinds else "host", r.count, r.window_ms)
        for r in rules.values()
    ]


def _by_host(faults: pl.DataFrame) -> dict[str, pl.DataFrame]:
    if not faults.height:
        return {}
    return {key[0]: frame for key, frame in faults.partition_by("host_id", as_dict=True).items()}  # type: ignore[misc]


def _dedup(findings: pl.DataFrame) -> pl.DataFrame:
    missing = {"host_id", "detector", "ts"} - set(findings.columns)
    if missing:
        raise ScoringError(f"findings lack column(s) {', '.join(sorted(missing))}")
    return findings.unique(subset=["finding_id"]) if "finding_id" in findings.columns else findings


def score_repeat_offender(
    findings: pl.DataFrame,
    hosts: pl.DataFrame,
    faults: pl.DataFrame,
    start: int,
    end: int,
    rules: Mapping[str, RepeatRule] = DEFAULT_RULES,
    met_rules: Sequence[ScopedRule] | None = None,
) -> DetectorScore:
    """Lemons found, missed and detectable; a healthy host flagged whose faults meet one of
    ``met_rules`` (the policy's rules, scope by scope) is "rule met", neither a TP nor an FP."""
    first = _first_findings(findings, "repeat_offender")
    lemons = hosts.filter(pl.col("lemon_kind").is_not_null()).to_dicts()
    truth = {h["host_id"] for h in lemons}
    by_host = _by_host(faults)
    detectable: dict[str, int] = {}  # host -> when the truth reached the threshold
    breakdown: dict[str, dict[str, int]] = {}
    ttd: list[float] = []
    lag: list[float] = []
    for h in lemons:
        kind = h["lemon_kind"]
        row = breakdown.setdefault(kind, {"truth": 0, "detectable": 0, "found": 0})
        row["truth"] += 1
        rule = rules.get(kind)
        own = by_host.get(h["host_id"])
        reached = None
        if rule is not None and own is not None:
            reached = threshold_reached_at(
                _scoped_faults(own, h, rule, start, end), rule.count, rule.window_ms
            )
        if reached is not None:
            detectable[h["host_id"]] = reached
            row["detectable"] += 1
        if h["host_id"] in first:
            row["found"] += 1
            onset = max(h["lemon_onset_ts"] if h["lemon_onset_ts"] is not None else start, start)
            ttd.append((first[h["host_id"]] - onset) / 1000)
            if reached is not None:
                lag.append((first[h["host_id"]] - reached) / 1000)
    met = default_met_rules(rules) if met_rules is None else list(met_rules)
    flagged = sorted(set(first) - truth)
    met_hosts = [h for h in flagged if h in by_host and rule_met(by_host[h], met, start, end)]
    fp_hosts = sorted(set(flagged) - set(met_hosts))
    return _assemble(
        "repeat_offender",
        first,
        truth,
        set(detectable),
        fp_hosts,
        ttd,
        breakdown,
        lag=lag,
        rule_met=len(met_hosts),
        rule_met_hosts=met_hosts,
    )


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
    first = _first_findings(findings, "slow_host")
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
    return _assemble(
        "slow_host",
        first,
        truth,
        detectable,
        fp_hosts,
        ttd,
        breakdown,
        ttd_median_windows=_pct(windows, 50),
        ttd_p90_windows=_pct(windows, 90),
        ttd_busy_median_windows=_pct(busy, 50),
        ttd_busy_p90_windows=_pct(busy, 90),
        window_s=periods[-1].window_s,
        window_source=source if len(periods) == 1 else f"{source}: {_window_chain(periods)}",
    )


def _window_chain(periods: Sequence[WindowPeriod]) -> str:
    return " → ".join(f"{p.window_s:g} s" for p in periods)


def score_critical_fault(
    findings: pl.DataFrame,
    faults: pl.DataFrame,
    start: int,
    end: int,
    kinds: Sequence[str] = DEFAULT_CRITICAL_KINDS,
) -> DetectorScore:
    """Hosts with a critical fault in the period vs hosts with a ``critical_fault`` finding.

    Every such fault should be acted on at once, so each host that had one is detectable, and the
    time to detect runs from its first critical fault.
    """
    first = _first_findings(findings, "critical_fault")
    crit = faults.filter(pl.col("kind").is_in(list(kinds)) & pl.col("ts").is_between(start, end))
    onsets = (
        crit.sort("ts")
        .group_by("host_id", maintain_order=True)
        .agg(pl.col("ts").first(), pl.col("kind").first())
    )
    breakdown: dict[str, dict[str, int]] = {}
    ttd: list[float] = []
    for host, onset, kind in onsets.iter_rows():
        row = breakdown.setdefault(kind, {"truth": 0, "detectable": 0, "found": 0})
        row["truth"] += 1
        row["detectable"] += 1
        if host in first:
            row["found"] += 1
            ttd.append((first[host] - onset) / 1000)
    truth = set(onsets["host_id"].to_list())
    return _assemble("critical_fault", first, truth, truth, sorted(set(first) - truth), ttd, breakdown)


def _assemble(
    detector: str,
    first: Mapping[str, int],
    truth: set[str],
    detectable: set[str],
    fp_hosts: list[str],
    ttd: list[float],
    breakdown: dict[str, dict[str, int]],
    *,
    lag: list[float] | None = None,
    **extra: Any,
) -> DetectorScore:
    found = set(first)
    tp = found & truth
    fn_hosts = sorted(detectable - found)
    lag = lag or []
    return DetectorScore(
        detector=detector,
        truth=len(truth),
        detectable=len(detectable),
        predicted=len(found),
        tp=len(tp),
        fp=len(fp_hosts),
        fn=len(fn_hosts),
        tp_undetectable=len(tp - detectable),
        precision=_ratio(len(tp), len(tp) + len(fp_hosts)),
        recall=_ratio(len(tp & detectable), len(detectable)),
        ttd_median_s=_pct(ttd, 50),
        ttd_p90_s=_pct(ttd, 90),
        lag_median_s=_pct(lag, 50) if detector == "repeat_offender" else None,
        lag_p90_s=_pct(lag, 90) if detector == "repeat_offender" else None,
        breakdown=breakdown,
        fp_hosts=fp_hosts,
        fn_hosts=fn_hosts,
        **extra,
    )


def _with_fp_rate(
    d: DetectorScore, findings: pl.DataFrame, n_hosts: int, start: int, end: int
) -> DetectorScore:
    """Findings on FP hosts per day of the period per 1,000 hosts: what an operator wades through."""
    n = findings.filter((pl.col("detector") == d.detector) & pl.col("host_id").is_in(d.fp_hosts)).height
    days = (end - start) / DAY_MS
    rate = n / days / (n_hosts / 1000) if days > 0 and n_hosts else None
    return dataclasses.replace(d, fp_findings=n, fp_per_day_per_1k_hosts=rate)


def score(
    findings: pl.DataFrame,
    hosts: pl.DataFrame,
    faults: pl.DataFrame,
    manifest: Mapping[str, Any],
    *,
    rules: Mapping[str, RepeatRule] = DEFAULT_RULES,
    slow_k: int = DEFAULT_SLOW_K,
    window_s: float | None = None,
    critical_kinds: Sequence[str] = DEFAULT_CRITICAL_KINDS,
    window_periods: Sequence[WindowPeriod] = (),
    met_rules: Sequence[ScopedRule] | None = None,
) -> ScoreReport:
    """Per detector: TP/FP/FN per host (a host counts once), precision over TP + FP (rule-met hosts
    apart), recall over the detectable truth, TTD, and false-positive findings per day per 1,000 hosts."""
    try:
        start, end = int(manifest["start_ts"]), int(manifest["end_ts"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ScoringError(f"manifest lacks a usable start_ts/end_ts ({exc})") from exc
    findings = _dedup(findings)
    scores = {
        "repeat_offender": score_repeat_offender(findings, hosts, faults, start, end, rules, met_rules),
        "slow_host": score_slow_host(
            findings, hosts, start, end, slow_k, window_s, window_periods, manifest.get("jobs") or ()
        ),
        "critical_fault": score_critical_fault(findings, faults, start, end, critical_kinds),
    }
    scores = {name: _with_fp_rate(d, findings, hosts.height, start, end) for name, d in scores.items()}
    params = {
        "rules": {
            k: {"kinds": list(r.kinds), "count": r.count, "window_s": r.window_ms / 1000}
            for k, r in rules.items()
        },
        "slow_k": slow_k,
        "window_s": window_s,
        "window_periods": [asdict(p) for p in window_periods],
        "critical_kinds": list(critical_kinds),
    }
    return ScoreReport(scores, {"start_ts": start, "end_ts": end}, params)
