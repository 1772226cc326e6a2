"""The I/O shells of the jobs: read the lake, call the pure functions, collect, return a JobResult.

``run_job(name, lake)`` is what the CLI, the report and the notebooks call.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from analytics.jobs import domain_sizing, early_life, fabric, interruptions, offenders
from analytics.jobs.errors import InsufficientDataError, UnknownJobError
from analytics.jobs.faults import EARLY_LIFE_KINDS, REPAIR_KINDS, load_faults
from analytics.jobs.result import JobResult
from analytics.jobs.source import (
    MS_PER_HOUR,
    latest_inventory,
    observation_window,
    read_manifest,
    scan,
    scan_optional,
)
from analytics.jobs.stats import compare, compare_rates
from analytics.jobs.survival import fit_power_law, kaplan_meier

Lake = str | Path


def _inventory(lake: Lake, job: str) -> pl.LazyFrame:
    return latest_inventory(scan(lake, "host_inventoried", job))


def run_early_life(
    lake: Lake, truth: Lake | None = None, bin_days: float = 7.0, min_repeat: int = 3
) -> JobResult:
    notes: list[str] = []
    inv = _inventory(lake, "early-life")
    start, end = observation_window(lake, read_manifest(truth))
    windows = early_life.host_windows(inv, start, end).collect().lazy()
    aged = early_life.fault_ages(load_faults(lake), windows).collect().lazy()
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
    tables["kaplan_meier"] = pl.concat(km_rows) if km_rows else pl.DataFrame()
    fits = []
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
    tables["power_law_fit"] = pl.DataFrame(fits)
    summary: dict[str, Any] = {
        "window_start_ts": start,
        "window_end_ts": end,
        "hosts": windows.select(pl.len()).collect().item(),
        "faults_in_window": aged.select(pl.len()).collect().item(),
        "fits": {
            f["mode"]: {k: f[k] for k in ("shape", "shape_lo", "shape_hi", "scale", "events")} for f in fits
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


def run_fabric(
    lake: Lake,
    truth: Lake | None = None,
    slow_threshold: float = 0.02,
    slow_min_windows: int = 3,
    slow_window_ms: int = MS_PER_HOUR,
    n_boot: int = 2000,
) -> JobResult:
    notes: list[str] = []
    inv = _inventory(lake, "fabric").collect().lazy()
    start, end = observation_window(lake, read_manifest(truth))
    samples = scan(lake, "host_sampled", "fabric")
    # The sample scans are the heavy part (bench/bench_analytics.py): run them on the streaming engine.
    tables = {"percentiles": fabric.sample_percentiles(samples, inv).collect(engine="streaming")}
    medians = fabric.host_medians(samples, inv).collect(engine="streaming")
    tables["host_medians"] = medians
    observed = fabric.host_days(inv, start, end)
    link = scan_optional(lake, "link_event_observed")
    if link is None:
        link = pl.LazyFrame(schema={"host_id": pl.String, "kind": pl.String, "count": pl.Int32})
        notes.append("no link_event_observed table: link error rates are zero")
    per_host_link = fabric.link_error_rates(link, observed).collect()
    tables["link_rates"] = fabric.link_rates_by_fabric(per_host_link.lazy()).collect()
    win = fabric.slow_windows(samples, slow_window_ms, slow_threshold)
    flags = fabric.slow_hosts(win, slow_min_windows).collect(engine="streaming")
    tables["slow_hosts"] = flags.join(inv.select("host_id", "fabric").collect(), on="host_id", how="left")
    tables["slow_incidence"] = fabric.slow_incidence(flags.lazy(), inv).collect()
    findings = scan_optional(lake, "finding_raised")
    if findings is not None:
        flagged = fabric.slow_hosts_from_findings(findings)
        tables["slow_incidence_findings"] = fabric.slow_incidence(flagged, inv).collect()
    actions = scan_optional(lake, "maintenance_action_recorded")
    episodes = fabric.repair_episodes(actions).collect() if actions is not None else None
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
            xa = frame.filter(pl.col("fabric") == a)[col].to_numpy()
            xb = frame.filter(pl.col("fabric") == b)[col].to_numpy()
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
    summary = {"fabrics": fabrics, "comparisons": {c["metric"]: c for c in comps}}
    return JobResult("fabric", tables, summary, notes)


def run_offenders(lake: Lake, truth: Lake | None = None, min_events: int = 3) -> JobResult:
    faults = load_faults(lake).collect().lazy()
    share = offenders.offender_share(faults, min_events).collect()
    top = offenders.offenders(faults, min_events).collect()
    overall = share.filter((pl.col("scope") == "host") & (pl.col("kind") == "all"))
    summary = {
        "min_events": min_events,
        "repeat_offenders": top.height,
        "host_share_of_faults": overall["share_of_faults"].item() if overall.height else None,
    }
    return JobResult("offenders", {"share": share, "offenders": top}, summary, [])


def run_maintenance_domain(
    lake: Lake,
    truth: Lake | None = None,
    restart_hours: float = 0.5,
    default_repair_hours: float = 24.0,
    batch_hours: float = 0.0,
    cycle_hours: float | None = 720.0,
) -> JobResult:
    notes: list[str] = []
    inv = _inventory(lake, "maintenance-domain").collect()
    start, end = observation_window(lake, read_manifest(truth))
    observed = fabric.host_days(inv.lazy(), start, end).collect()
    host_hours = float(observed["days"].sum()) * 24.0
    faults = load_faults(lake).filter(pl.col("kind").is_in(REPAIR_KINDS)).collect()
    lam = domain_sizing.failure_rate(faults.height, host_hours)
    hosts = int(inv.group_by("cluster").len()["len"].max())  # type: ignore[arg-type]
    actions = scan_optional(lake, "maintenance_action_recorded")
    episodes = fabric.repair_episodes(actions).collect() if actions is not None else pl.DataFrame()
    if episodes.height:
        repair = float(episodes["hours"].median())  # type: ignore[arg-type]
    else:
        repair = default_repair_hours
        notes.append(f"no maintenance episodes in the lake: repair time assumed {repair:g} h")
    gpus_per_host = int(inv["gpu_count"].max() or 8)  # type: ignore[arg-type]
    inter = scan_optional(lake, "job_interrupted")
    job_gpus = inter.select(pl.col("job_gpus").max()).collect().item() if inter is not None else None
    job_hosts = min(hosts, max(1, int(job_gpus) // gpus_per_host)) if job_gpus else hosts
    if not np.isfinite(lam) or lam <= 0:
        raise InsufficientDataError("maintenance-domain sizing", "no repair-needing faults observed")
    model = domain_sizing.DomainModel(
        hosts=hosts, failure_rate=lam, repair_hours=repair, job_hosts=job_hosts,
        restart_hours=restart_hours, batch_hours=batch_hours, cycle_hours=cycle_hours,
    )  # fmt: skip
    best = domain_sizing.optimum(model)
    tables = {"cost_curve": domain_sizing.cost_curve(model), "sensitivity": domain_sizing.sensitivity(model)}
    summary = {"model": model._asdict(), "optimum": best._asdict(), "repair_faults": faults.height}
    return JobResult("maintenance-domain", tables, summary, notes)


def run_interruptions(lake: Lake, truth: Lake | None = None) -> JobResult:
    notes: list[str] = []
    inter = scan(lake, "job_interrupted", "interruptions").collect()
    tables = {
        "root_causes": interruptions.root_cause_table(inter.lazy()).collect(),
        "root_causes_repeats_once": interruptions.root_cause_table(
            interruptions.without_repeats(inter.lazy())
        ).collect(),
    }
    inv = _inventory(lake, "interruptions").collect()
    start, end = observation_window(lake, read_manifest(truth))
    observed = (
        fabric.host_days(inv.lazy(), start, end)
        .collect()
        .join(inv.select("host_id", "gpu_count"), on="host_id")
    )
    gpu_hours = float((observed["days"] * observed["gpu_count"]).sum()) * 24.0
    rate = interruptions.fleet_rate_per_gpu_hour(inter.height, gpu_hours)
    tables["projected_mttf"] = interruptions.projected_mttf(rate)
    samples = scan_optional(lake, "host_sampled")
    slope = interruptions.SizeSlope(float("nan"), float("nan"), 0)
    if samples is not None and "job_id" in samples.collect_schema().names():
        runs = interruptions.job_runs(samples, inter.lazy(), int(inv["gpu_count"].max() or 8))  # type: ignore[arg-type]
        by_size = interruptions.mttf_by_size(runs).collect()
        tables["mttf_by_size"] = by_size
        slope = interruptions.size_slope(by_size)
    else:
        notes.append("host samples carry no job_id: MTTF by size is the per-GPU-rate projection only")
    summary = {
        "interruptions": inter.height,
        "interruptions_repeats_once": int(tables["root_causes_repeats_once"]["count"].sum()),
        "gpu_hours": gpu_hours,
        "rate_per_gpu_day": rate * 24.0,
        "mttf_size_slope": slope.slope,
        "size_buckets": slope.buckets,
    }
    return JobResult("interruptions", tables, summary, notes)


JOBS: dict[str, Callable[..., JobResult]] = {
    "early-life": run_early_life,
    "fabric": run_fabric,
    "offenders": run_offenders,
    "maintenance-domain": run_maintenance_domain,
    "interruptions": run_interruptions,
}


def run_job(name: str, lake: Lake, truth: Lake | None = None, **params: Any) -> JobResult:
    """Run one job by name over a lake (``truth``: the simulator's truth dir, for its window)."""
    if name not in JOBS:
        raise UnknownJobError(name, tuple(JOBS))
    return JOBS[name](lake, truth, **params)
