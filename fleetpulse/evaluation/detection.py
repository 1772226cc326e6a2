"""Scores detector findings against the simulator's ground truth (precision, recall, time to detect).

Pure: ``score(findings, hosts, faults, manifest)`` takes frames shaped as in the truth
contract (``hosts.parquet``, ``faults.parquet``, ``manifest.json``) and the flat
FindingRaised table; reading them from Kafka or the lake is ``fleetpulse.evaluation.sources``'s job.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

import polars as pl

from analytics.jobs.slow_truth import Materiality, resolutions_of
from fleetpulse.evaluation.lemon_truth import DAY_MS, LemonMateriality, lemon_faults, material_lemons
from fleetpulse.evaluation.policy_rules import default_critical_kinds, default_rules, default_slow_k
from fleetpulse.evaluation.report import DetectorScore, ScoreReport, assemble, first_findings
from fleetpulse.evaluation.rule_met import RepeatRule, ScopedRule, rule_met, rules_for, threshold_reached_at
from fleetpulse.evaluation.slow_hosts import WindowPeriod, score_slow_host, windows_between
from ground.errors import FleetpulseError

__all__ = [
    "DAY_MS",
    "DETECTORS",
    "DetectorScore",
    "LemonMateriality",
    "RepeatRule",
    "ScoreReport",
    "ScoringError",
    "WindowPeriod",
    "default_critical_kinds",
    "default_rules",
    "default_slow_k",
    "score",
    "score_critical_fault",
    "score_repeat_offender",
    "score_slow_host",
    "threshold_reached_at",
    "windows_between",
]

DETECTORS = ("repeat_offender", "slow_host", "critical_fault")


class ScoringError(FleetpulseError):
    """Truth or findings are missing or malformed (the message names the file or column)."""


# Thresholds a caller leaves out are the shipped policy's (``policy_rules``): ground/policy.toml is
# the only place rule defaults live. A row-remap failure is not counted as a DRAM UCE: the policy
# classifies it apart (and acts on it at once, as detector "critical_fault").


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
    rules: Mapping[str, RepeatRule] | None = None,
    met_rules: Sequence[ScopedRule] | None = None,
    materiality: LemonMateriality | None = None,
) -> DetectorScore:
    """Lemons found, missed and to be found: the material ones (``materiality``, by default
    ``LemonMateriality()``), never those the policy under test could see. ``rules`` (the policy's
    thresholds) only time the lag from the moment a lemon's faults reached its rule to its finding.
    A healthy host flagged whose faults meet one of ``met_rules`` (the policy's rules, scope by scope)
    is "rule met", neither a TP nor an FP."""
    rules = default_rules() if rules is None else rules
    m = materiality or LemonMateriality()
    first = first_findings(findings, "repeat_offender")
    lemons = hosts.filter(pl.col("lemon_kind").is_not_null()).to_dicts()
    truth = {h["host_id"] for h in lemons}
    by_host = _by_host(faults)
    material = material_lemons(hosts, faults, start, end, m)
    breakdown: dict[str, dict[str, int]] = {}
    ttd: list[float] = []
    lag: list[float] = []
    for h in lemons:
        kind = h["lemon_kind"]
        row = breakdown.setdefault(kind, {"truth": 0, "detectable": 0, "found": 0})
        row["truth"] += 1
        row["detectable"] += h["host_id"] in material
        rule = rules.get(kind)
        own = by_host.get(h["host_id"])
        reached = None  # when the lemon's faults reached the policy's own rule
        if rule is not None and own is not None:
            reached = threshold_reached_at(
                lemon_faults(own, h, rule.kinds, start, end), rule.count, rule.window_ms
            )
        if h["host_id"] in first:
            row["found"] += 1
            onset = max(h["lemon_onset_ts"] if h["lemon_onset_ts"] is not None else start, start)
            ttd.append((first[h["host_id"]] - onset) / 1000)
            if reached is not None:
                lag.append((first[h["host_id"]] - reached) / 1000)
    met = default_met_rules(rules) if met_rules is None else list(met_rules)
    flagged = sorted(set(first) - truth)
    host_only = set(hosts.filter(pl.col("host_only"))["host_id"]) if "host_only" in hosts.columns else set()
    met_hosts = [
        h
        for h in flagged
        if h in by_host and rule_met(by_host[h], rules_for(met, h in host_only), start, end)
    ]
    fp_hosts = sorted(set(flagged) - set(met_hosts))
    return assemble(
        "repeat_offender",
        first,
        truth,
        set(material),
        fp_hosts,
        ttd,
        breakdown,
        lag=lag,
        rule_met=len(met_hosts),
        rule_met_hosts=met_hosts,
        truth_definition=m.describe(),
    )


def score_critical_fault(
    findings: pl.DataFrame,
    faults: pl.DataFrame,
    start: int,
    end: int,
    kinds: Sequence[str] | None = None,
) -> DetectorScore:
    """Hosts with a critical fault in the period vs hosts with a ``critical_fault`` finding.

    Every such fault should be acted on at once, so each host that had one is detectable, and the
    time to detect runs from its first critical fault.
    """
    kinds = default_critical_kinds() if kinds is None else kinds
    first = first_findings(findings, "critical_fault")
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
    return assemble("critical_fault", first, truth, truth, sorted(set(first) - truth), ttd, breakdown)


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
    rules: Mapping[str, RepeatRule] | None = None,
    slow_k: int | None = None,
    slow_n: int | None = None,
    slow_min: float = 0.0,
    window_s: float | None = None,
    critical_kinds: Sequence[str] | None = None,
    window_periods: Sequence[WindowPeriod] = (),
    met_rules: Sequence[ScopedRule] | None = None,
    slow_truth: Materiality | None = None,
    lemon_truth: LemonMateriality | None = None,
) -> ScoreReport:
    """Per detector: TP/FP/FN per host (a host counts once), precision over TP + FP (rule-met hosts
    apart), recall over the truth's hosts to be found, TTD, and false-positive findings per day per
    1,000 hosts.

    The lemons and slow hosts to be found are fixed by ``lemon_truth`` and ``slow_truth`` (the
    evaluation's materiality), never by the policy under test: ``rules`` only time the lag after a
    lemon reached its rule, and ``slow_k``, ``slow_n`` and ``slow_min`` only record that policy's rule
    in the report's parameters."""
    materiality = slow_truth or Materiality()
    lemon_materiality = lemon_truth or LemonMateriality()
    rules = default_rules() if rules is None else rules
    slow_k = default_slow_k() if slow_k is None else slow_k
    critical_kinds = default_critical_kinds() if critical_kinds is None else critical_kinds
    try:
        start, end = int(manifest["start_ts"]), int(manifest["end_ts"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ScoringError(f"manifest lacks a usable start_ts/end_ts ({exc})") from exc
    findings = _dedup(findings)
    scores = {
        "repeat_offender": score_repeat_offender(
            findings, hosts, faults, start, end, rules, met_rules, lemon_materiality
        ),
        "slow_host": score_slow_host(
            findings,
            hosts,
            start,
            end,
            window_s,
            window_periods,
            manifest.get("jobs") or (),
            manifest.get("slow_episodes") or (),
            materiality=materiality,
            resolutions=resolutions_of(manifest),
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
        "slow_n": slow_n,
        "slow_min_slowdown": slow_min,
        "slow_truth": {**asdict(materiality), "definition": materiality.describe()},
        "lemon_truth": {**asdict(lemon_materiality), "definition": lemon_materiality.describe()},
        "window_s": window_s,
        "window_periods": [asdict(p) for p in window_periods],
        "critical_kinds": list(critical_kinds),
    }
    return ScoreReport(scores, {"start_ts": start, "end_ts": end}, params)
