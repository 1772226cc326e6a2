"""The I/O shells of the jobs: read the lake, call the pure functions, collect, return a JobResult.

``run_job(name, lake)`` is what the CLI, the report and the notebooks call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from analytics.jobs import early_life, fabric, offenders, slow_view
from analytics.jobs.campaign_job import run_campaigns
from analytics.jobs.coverage import Coverage, coverage_of
from analytics.jobs.early_life_fit import EarlyLifeFit, fit_early_life
from analytics.jobs.errors import InsufficientDataError, UnknownJobError
from analytics.jobs.inferred_faults import EARLY_LIFE_KINDS, load_faults
from analytics.jobs.operations import run_incidents, run_interruptions, run_maintenance_domain
from analytics.jobs.result import JobResult, fit_table
from analytics.jobs.source import (
    latest_inventory,
    observation_window,
    read_manifest,
    scan,
    scan_optional,
)
from analytics.jobs.stats import compare, compare_rates
from analytics.jobs.survival import PowerLawFit, fit_power_law, kaplan_meier
from ground.slow_peers import PeerRule

Lake = str | Path
# a Kaplan–Meier table with no group in it (no failures): still the columns readers select
KM_SCHEMA = {
    "group": pl.String(),
    "time": pl.Float64(),
    "at_risk": pl.Int64(),
    "events": pl.Int64(),
    "survival": pl.Float64(),
    "lower": pl.Float64(),
    "upper": pl.Float64(),
}


def _inventory(lake: Lake, job: str) -> pl.LazyFrame:
    return latest_inventory(scan(lake, "host_inventoried", job))


def run_early_life(
    lake: Lake, truth: Lake | None = None, bin_days: float = 7.0, min_repeat: int = 3
) -> JobResult:
    notes: list[str] = []
    every_host = _inventory(lake, "early-life").collect()
    inv = every_host.filter(early_life.has_install_date()).lazy()
    undated = every_host.height - inv.select(pl.len()).collect().item()
    if undated == every_host.height:
        raise InsufficientDataError(
            "early-life curves",
            f"none of the {undated} hosts has a real install date (install_ts missing or 0, or a host "
            "created by an import, rack 'imported'): host age is unknown, so the hazard by age and the fit are skipped",
        )
    if undated:
        notes.append(
            f"{undated} of {every_host.height} hosts have no real install date (install_ts missing or 0, or "
            "rack 'imported'): "
            "left out of every age-based table and of the fit"
        )
    start, end = observation_window(lake, read_manifest(truth))
    windows = early_life.host_windows(inv, start, end).collect().lazy()
    in_window = load_faults(lake).filter(pl.col("ts").is_between(start, end)).collect()
    aged = early_life.fault_ages(in_window.lazy(), windows).collect().lazy()
    tables = {
        "hazard_by_mode": early_life.hazard_by_age(aged, windows, bin_days, ("kind",)).collect(),
        "hazard_by_cohort": early_life.hazard_by_age(
            aged.filter(pl.col("kind").is_in(EARLY_LIFE_KINDS)), windows, bin_days, ("kind", "cohort")
        ).collect(),
        "bathtub": early_life.bathtub(aged, windows, bin_days).collect(),
    }
    samples = scan_optional(lake, "host_sampled")
    if samples is not None:
        # The heavy part. Polars' default engine, not the streaming one: on the 100M-row bench lake it
        # ran this join + group-by faster in each of three runs (by 3 %, 12 % and 14 %), at the same
        # peak memory (bench/bench_analytics.py, hazard_by_age; docs/benchmarks/analytics.md).
        profile = early_life.sample_age_profile(samples, inv, bin_days)
        tables["samples_by_age"] = profile.collect()
    km_rows = []
    km_groups: tuple[tuple[str, tuple[str, ...] | None], ...] = (
        ("early_life_modes", EARLY_LIFE_KINDS),
        ("all_modes", None),
    )
    for group, km_kinds in km_groups:
        ff = early_life.first_failures(aged, windows, km_kinds).collect()
        if ff["event"].sum() == 0:
            notes.append(f"Kaplan–Meier ({group}): no failures")
            continue
        km = kaplan_meier(ff["entry_age_d"], ff["stop_age_d"], ff["event"])
        km_rows.append(pl.DataFrame({"group": group, **km._asdict()}))
    tables["kaplan_meier"] = pl.concat(km_rows) if km_rows else pl.DataFrame(schema=KM_SCHEMA)
    fits, mixed_fits = [], []
    groups: list[tuple[str, tuple[str, ...]]] = [(k, (k,)) for k in EARLY_LIFE_KINDS]
    for label, kinds in [*groups, ("early_life_modes", EARLY_LIFE_KINDS)]:
        ages, wins = early_life.fit_inputs(aged, windows, kinds, min_repeat)
        ages_df, wins_df = ages.collect(), wins.collect()
        try:
            fit = fit_power_law(ages_df["age_d"], wins_df["entry_age_d"], wins_df["exit_age_d"])
        except InsufficientDataError as exc:
            notes.append(f"power-law fit for {label}: {exc}")
            continue
        excluded = windows.select(pl.len()).collect().item() - wins_df.height
        fits.append({"mode": label, **fit._asdict(), "lemon_hosts_excluded": excluded})
        mixed = fit_early_life(ages_df["age_d"], wins_df["entry_age_d"], wins_df["exit_age_d"])
        mixed_fits.append({"mode": label, **mixed._asdict()})
        if not mixed.decided:
            notes.append(f"early-life fit with background for {label}: insufficient data, {mixed.reason}")
    tables["power_law_fit"] = fit_table(fits, PowerLawFit, {"lemon_hosts_excluded": pl.Int64()})
    tables["early_life_fit"] = fit_table(mixed_fits, EarlyLifeFit)
    aged_n = aged.select(pl.len()).collect().item()
    dated = Coverage(aged_n, in_window.height, "faults in the window", "on hosts of known age")
    early_total = in_window.filter(pl.col("kind").is_in(EARLY_LIFE_KINDS)).height
    fitted = next((f["events"] for f in fits if f["mode"] == "early_life_modes"), 0)
    cov = {name: dated for name in tables if name != "samples_by_age"} | {
        "early_life_fit": Coverage(
            fitted,
            early_total,
            "early-life faults in the window",
            "fitted (hosts of known age, repeat offenders left out)",
        ),
        "power_law_fit": Coverage(
            fitted,
            early_total,
            "early-life faults in the window",
            "fitted (hosts of known age, repeat offenders left out)",
        ),
    }
    if samples is not None:
        seen = int(tables["samples_by_age"]["samples"].sum())
        cov["samples_by_age"] = Coverage(
            seen, samples.select(pl.len()).collect().item(), "samples", "from hosts of known age"
        )
    summary: dict[str, Any] = {
        "coverage": coverage_of(cov),
        "hosts_without_install_date": undated,
        "window_start_ts": start,
        "window_end_ts": end,
        "hosts": windows.select(pl.len()).collect().item(),
        "faults_in_window": aged_n,
        "fits": {
            f["mode"]: {k: f[k] for k in ("shape", "shape_lo", "shape_hi", "scale", "events")} for f in fits
        },
        "early_life_fits": {
            f["mode"]: {
                k: f[k]
                for k in (
                    "shape",
                    "shape_lo",
                    "shape_hi",
                    "strict_lo",
                    "strict_hi",
                    "scale",
                    "background_per_day",
                    "early_share",
                    "events",
                    "decided",
                    "reason",
                )
            }
            for f in mixed_fits
        },
    }
    return JobResult("early-life", tables, summary, notes)


def repair_host_medians(episodes: pl.DataFrame, inventory: pl.DataFrame) -> pl.DataFrame:
    """One median time to repair per host (with its fabric): the unit of the time-to-repair A/B.

    Episodes of one host are not independent samples: compared one by one, a host with many long
    repairs would dominate the Mann–Whitney test and the bootstrap, as no other metric lets it.
    """
    return (
        episodes.join(inventory.select("host_id", "fabric"), on="host_id")
        .group_by("host_id", "fabric")
        .agg(pl.len().alias("episodes"), pl.col("hours").median())
        .sort("host_id")
    )


def slow_rule(threshold: float | None, evidence: float | None, window_ms: int | None) -> PeerRule:
    """The detector's peer rule and evidence threshold, with the overrides a caller gave."""
    rule = slow_view.DEFAULT_RULE
    return dataclasses.replace(
        rule,
        min_slowdown=rule.min_slowdown if threshold is None else threshold,
        evidence=rule.evidence if evidence is None else evidence,
        window=rule.window if window_ms is None else window_ms,
    )


def run_fabric(
    lake: Lake,
    truth: Lake | None = None,
    slow_threshold: float | None = None,
    slow_evidence: float | None = None,
    slow_window_ms: int | None = None,
    n_boot: int = 2000,
) -> JobResult:
    """Fabric A/B and the batch slow-host view; the slow-host test is the detector's (``ground.slow_peers``),
    with its default thresholds unless ``slow_threshold`` (min slowdown), ``slow_evidence`` (nats) or
    ``slow_window_ms`` change them."""
    notes: list[str] = []
    rule = slow_rule(slow_threshold, slow_evidence, slow_window_ms)
    inv = _inventory(lake, "fabric").collect().lazy()
    start, end = observation_window(lake, read_manifest(truth))
    samples = scan(lake, "host_sampled", "fabric")
    # The sample scans are the heavy part (bench/bench_analytics.py): run them on the streaming engine.
    tables = {"percentiles": fabric.sample_percentiles(samples, inv).collect(engine="streaming")}
    of_known = Coverage(
        int(tables["percentiles"]["samples"].sum()),
        samples.select(pl.len()).collect().item(),
        "samples",
        "from inventoried hosts (fabric known)",
    )
    cov = dict.fromkeys(
        ("percentiles", "host_medians", "slow_hosts", "slow_incidence", "comparisons"), of_known
    )
    medians = fabric.host_medians(samples, inv).collect(engine="streaming")
    tables["host_medians"] = medians
    observed = fabric.host_days(inv, start, end)
    link = scan_optional(lake, "link_event_observed")
    if link is None:
        link = pl.LazyFrame(schema={"host_id": pl.String, "kind": pl.String, "count": pl.Int32})
        notes.append("no link_event_observed table: link error rates are zero")
    per_host_link = fabric.link_error_rates(link, observed).collect()
    tables["link_rates"] = fabric.link_rates_by_fabric(per_host_link.lazy()).collect()
    downs = link.filter(pl.col("kind") == "down").select(pl.len()).collect().item()
    cov["link_rates"] = Coverage(
        int(per_host_link["downs"].sum()), downs, "link downs", "on hosts in service in the window"
    )
    win = slow_view.slow_windows(samples, rule)
    flags = slow_view.slow_hosts(win, rule).collect(engine="streaming")
    tables["slow_hosts"] = flags.join(inv.select("host_id", "fabric").collect(), on="host_id", how="left")
    tables["slow_incidence"] = fabric.slow_incidence(flags.lazy(), inv).collect()
    findings = scan_optional(lake, "finding_raised")
    if findings is not None:
        flagged = fabric.slow_hosts_from_findings(findings)
        tables["slow_incidence_findings"] = fabric.slow_incidence(flagged, inv).collect()
        cov["slow_incidence_findings"] = of_known
    actions = scan_optional(lake, "maintenance_action_recorded")
    every_episode = fabric.repair_episodes(actions, keep_open=True).collect() if actions is not None else None
    episodes = every_episode.filter(pl.col("end_ts").is_not_null()) if every_episode is not None else None
    if every_episode is not None:
        cov["repair"] = Coverage(episodes.height, every_episode.height, "maintenance episodes", "closed")  # type: ignore[union-attr]
    if episodes is not None and episodes.height:
        tables["repair"] = fabric.repair_summary(episodes.lazy(), inv).collect()
    else:
        notes.append("no completed maintenance episodes: time to repair not measured")
    fabrics = sorted(medians["fabric"].unique().to_list())
    comps = []
    if len(fabrics) == 2:
        a, b = fabrics
        series = [(m, medians, m) for m in fabric.METRICS]
        if episodes is not None and episodes.height:
            series.append(("time_to_repair_h", repair_host_medians(episodes, inv.collect()), "hours"))
        la, lb = (per_host_link.filter(pl.col("fabric") == f) for f in (a, b))
        for metric, frame, col in series:
            # a host no job ran on has no median step time: it is not in that comparison
            xa = frame.filter(pl.col("fabric") == a)[col].drop_nulls().to_numpy()
            xb = frame.filter(pl.col("fabric") == b)[col].drop_nulls().to_numpy()
            try:
                comps.append(compare(metric, xa, xb, a, b, n_boot=n_boot)._asdict())
            except InsufficientDataError as exc:
                notes.append(str(exc))
        for metric, col in (("link_downs_per_host_day", "downs"), ("link_flaps_per_host_day", "flaps")):
            try:
                c = compare_rates(metric, la[col], la["days"], lb[col], lb["days"], a, b, n_boot=n_boot)
                comps.append(c._asdict())
            except InsufficientDataError as exc:
                notes.append(str(exc))
    else:
        notes.append(f"fabric comparison needs exactly two fabrics, found {fabrics}")
    tables["comparisons"] = pl.DataFrame(comps)
    summary = {
        "fabrics": fabrics,
        "comparisons": {c["metric"]: c for c in comps},
        "coverage": coverage_of(cov),
        "slow_rule": dataclasses.asdict(rule),
    }
    return JobResult("fabric", tables, summary, notes)


def run_offenders(lake: Lake, truth: Lake | None = None, min_events: int = 3) -> JobResult:
    faults = load_faults(lake).collect().lazy()
    share = offenders.offender_share(faults, min_events).collect()
    top = offenders.offenders(faults, min_events).collect()
    overall = share.filter((pl.col("scope") == "host") & (pl.col("kind") == "all"))
    total = faults.select(pl.len()).collect().item()
    with_unit = offenders.hardware_faults(faults).select(pl.len()).collect().item()
    signal = Coverage(
        with_unit, total, "faults", "with a hardware signal, or incidents naming failed hardware"
    )
    summary = {
        "min_events": min_events,
        "repeat_offenders": top.height,
        "host_share_of_faults": overall["share_of_faults"].item() if overall.height else None,
        "coverage": coverage_of({"share": signal, "offenders": signal}),
    }
    return JobResult("offenders", {"share": share, "offenders": top}, summary, [])


JOBS: dict[str, Callable[..., JobResult]] = {
    "early-life": run_early_life,
    "fabric": run_fabric,
    "offenders": run_offenders,
    "maintenance-domain": run_maintenance_domain,
    "interruptions": run_interruptions,
    "incidents": run_incidents,
    "campaigns": run_campaigns,
}


def run_job(name: str, lake: Lake, truth: Lake | None = None, **params: Any) -> JobResult:
    """Run one job by name over a lake (``truth``: the simulator's truth dir, for its window)."""
    if name not in JOBS:
        raise UnknownJobError(name, tuple(JOBS))
    return JOBS[name](lake, truth, **params)
