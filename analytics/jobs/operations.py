"""The I/O shells of the operations jobs: incidents and repair times, interruptions, domain sizing.

Each reads the lake, calls the pure functions, and says in its summary what share of the input
every table rests on (``coverage``) and which of its inputs were measured and which assumed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from analytics.jobs import domain_sizing, fabric, incidents, interruptions, repairs
from analytics.jobs.coverage import Coverage, classified_coverage, coverage_of
from analytics.jobs.errors import InsufficientDataError
from analytics.jobs.inferred_faults import NO_REPAIR_KINDS, load_faults
from analytics.jobs.result import JobResult
from analytics.jobs.source import (
    latest_inventory,
    observation_window,
    read_manifest,
    scan,
    scan_optional,
    unique_events,
)

Lake = str | Path
ACTIONS_TABLE = "maintenance_action_recorded"


def outages(lake: Lake) -> pl.DataFrame:
    """Every outage the lake records: incidents, operator out-of-service spells, the planner's episodes."""
    return repairs.all_intervals(
        incidents.load_incidents(lake),
        incidents.load_operator_events(lake),
        scan_optional(lake, ACTIONS_TABLE),
    ).collect()


def _by_source(intervals: pl.DataFrame) -> str:
    closed = intervals.filter(pl.col("end_ts").is_not_null()).group_by("source").len().sort("source")
    return ", ".join(f"{s} {n}" for s, n in closed.iter_rows())


def run_incidents(
    lake: Lake, truth: Lake | None = None, reset_within_hours: float = repairs.PACKAGED_RESET_WITHIN_H
) -> JobResult:
    """Cause table of the recorded incidents (unclassified a row), their unmapped classes, time to repair
    per cause and source, and per cause and operation kind (a time out under ``reset_within_hours``,
    the planner's ``reset_within``, was a reset, not a repair)."""
    recorded = incidents.load_incidents(lake)
    spells = outages(lake)
    if recorded is None and spells.is_empty():
        raise InsufficientDataError(
            "incidents and repair times",
            f"the lake has no {incidents.INCIDENTS_TABLE}, {incidents.OPERATOR_EVENTS_TABLE} or {ACTIONS_TABLE} "
            "(import a history with `fleetpulse import`, or archive a fleet with its detectors running)",
        )
    tables: dict[str, pl.DataFrame] = {}
    cov: dict[str, Coverage] = {}
    summary: dict = {"incidents": 0, "classified": 0}
    if recorded is not None:
        frame = recorded.collect()
        tables["causes"] = incidents.cause_table(frame.lazy()).collect()
        tables["unclassified_classes"] = incidents.unclassified_classes(frame.lazy()).collect()
        classified = classified_coverage(frame, "incidents")
        cov["causes"] = classified
        unclassified = classified.total - classified.counted
        cov["unclassified_classes"] = Coverage(unclassified, classified.total, "incidents", "unclassified")
        summary |= {
            "incidents": classified.total,
            "classified": classified.counted,
            "unclassified_source_classes": tables["unclassified_classes"].height,
        }
    tables["time_to_repair"] = repairs.repair_times(spells.lazy()).collect()
    cov["time_to_repair"] = repairs.interval_coverage(spells)
    by_operation = repairs.repair_times_by_operation(spells.lazy(), reset_within_hours)
    tables["time_to_repair_by_operation"] = by_operation.collect()
    cov["time_to_repair_by_operation"] = cov["time_to_repair"]
    summary |= {
        "outages": spells.height,
        "closed_outages": cov["time_to_repair"].counted,
        "closed_by_source": _by_source(spells),
        "coverage": coverage_of(cov),
    }
    return JobResult("incidents", tables, summary, [])


def _job_hosts(lake: Lake, hosts: int, gpus_per_host: int) -> tuple[int, str]:
    """J for the domain model: the largest job the lake saw, or the whole cluster (assumed) without one."""
    inter = scan_optional(lake, "job_interrupted")
    if inter is not None:
        job_gpus = inter.select(pl.col("job_gpus").filter(pl.col("job_gpus") > 0).max()).collect().item()
        if job_gpus:
            job_hosts = min(hosts, max(1, int(job_gpus) // gpus_per_host))
            return job_hosts, f"measured: the largest interrupted job, {job_gpus} GPUs"
    samples = scan_optional(lake, "host_sampled")
    if samples is not None and "job_id" in samples.collect_schema().names():
        running = samples.filter(pl.col("job_id").is_not_null())
        largest = running.group_by("job_id").agg(pl.col("host_id").n_unique()).select(pl.col("host_id").max())
        widest = largest.collect().item()
        if widest:
            return min(hosts, int(widest)), f"measured: the largest job in the samples, {widest} hosts"
    return hosts, f"assumed: one job on the whole cluster ({hosts} hosts); the lake has no job sizes"


def run_maintenance_domain(
    lake: Lake,
    truth: Lake | None = None,
    restart_hours: float = 0.5,
    default_repair_hours: float = 24.0,
    batch_hours: float = 0.0,
    cycle_hours: float | None = 720.0,
    reset_within_hours: float = repairs.PACKAGED_RESET_WITHIN_H,
) -> JobResult:
    notes: list[str] = []
    inv = latest_inventory(scan(lake, "host_inventoried", "maintenance-domain")).collect()
    start, end = observation_window(lake, read_manifest(truth))
    observed = fabric.host_days(inv.lazy(), start, end).collect()
    host_hours = float(observed["days"].sum()) * 24.0
    every = load_faults(lake).collect()
    faults = every.filter(~pl.col("kind").is_in(NO_REPAIR_KINDS))
    lam = domain_sizing.failure_rate(faults.height, host_hours)
    if not np.isfinite(lam) or lam <= 0:
        raise InsufficientDataError("maintenance-domain sizing", "no repair-needing faults observed")
    hosts = int(inv.group_by("cluster").len()["len"].max())  # type: ignore[arg-type]
    spells = outages(lake)
    measured, n = repairs.repair_hours(spells, reset_within_hours)
    if measured is None:
        repair = default_repair_hours
        notes.append(f"no closed outage in the lake: repair time assumed {repair:g} h (default_repair_hours)")
        repair_basis = f"assumed: {repair:g} h (default_repair_hours); no closed outage to measure"
    else:
        repair = measured
        repair_basis = (
            f"measured: median of {n} closed outages ({_by_source(spells)}), "
            f"resets (under {reset_within_hours:g} h) not counted"
        )
    gpus_per_host = int(inv["gpu_count"].max() or 8)  # type: ignore[arg-type]
    job_hosts, job_basis = _job_hosts(lake, hosts, gpus_per_host)
    if job_basis.startswith("assumed"):
        notes.append(f"job size {job_basis}")
    model = domain_sizing.DomainModel(
        hosts=hosts,
        failure_rate=lam,
        repair_hours=repair,
        job_hosts=job_hosts,
        restart_hours=restart_hours,
        batch_hours=batch_hours,
        cycle_hours=cycle_hours,
    )
    best = domain_sizing.optimum(model)
    tables = {
        "cost_curve": domain_sizing.cost_curve(model),
        "sensitivity": domain_sizing.sensitivity(model),
        "repair_times": repairs.repair_times(spells.lazy()).collect(),
        "repair_times_by_operation": repairs.repair_times_by_operation(
            spells.lazy(), reset_within_hours
        ).collect(),
    }
    counted = Coverage(
        faults.height,
        every.height,
        "faults",
        "need a repair (software, NCCL watchdog and link flaps do not) and set the failure rate",
    )
    inputs = {
        "hosts": f"measured: the largest cluster in the inventory, {hosts} hosts",
        "failure_rate": f"measured: {faults.height} repair-needing faults over {host_hours:,.0f} host-hours",
        "repair_hours": repair_basis,
        "job_hosts": job_basis,
        "restart_hours": f"assumed: {restart_hours:g} h (parameter)",
        "batch_hours": f"assumed: {batch_hours:g} h (parameter)",
        "cycle_hours": f"assumed: {cycle_hours} h (parameter)",
    }
    measured_cov = repairs.interval_coverage(spells)
    cov = {
        "cost_curve": counted,
        "sensitivity": counted,
        "repair_times": measured_cov,
        "repair_times_by_operation": measured_cov,
    }
    summary = {
        "model": model._asdict(),
        "optimum": best._asdict(),
        "repair_faults": faults.height,
        "inputs": inputs,
        "coverage": coverage_of(cov),
    }
    return JobResult("maintenance-domain", tables, summary, notes)


def run_interruptions(lake: Lake, truth: Lake | None = None) -> JobResult:
    notes: list[str] = []
    inter = unique_events(scan(lake, "job_interrupted", "interruptions")).collect()
    once = interruptions.without_repeats(inter.lazy()).collect()
    tables = {
        "root_causes": interruptions.root_cause_table(inter.lazy()).collect(),
        "root_causes_repeats_once": interruptions.root_cause_table(once.lazy()).collect(),
    }
    cov = {
        "root_causes": classified_coverage(inter, "interruptions"),
        "root_causes_repeats_once": classified_coverage(once, "interruptions (each host and cause once)"),
    }
    inv = latest_inventory(scan(lake, "host_inventoried", "interruptions")).collect()
    start, end = observation_window(lake, read_manifest(truth))
    observed = (
        fabric.host_days(inv.lazy(), start, end)
        .collect()
        .join(inv.select("host_id", "gpu_count"), on="host_id")
    )
    gpu_hours = float((observed["days"] * observed["gpu_count"]).sum()) * 24.0
    rate = interruptions.fleet_rate_per_gpu_hour(inter.height, gpu_hours)
    tables["projected_mttf"] = interruptions.projected_mttf(rate)
    on_known = inter.join(inv.select("host_id"), on="host_id", how="semi").height
    cov["projected_mttf"] = Coverage(
        on_known, inter.height, "interruptions", "on inventoried hosts (whose GPU-hours are the exposure)"
    )
    samples = scan_optional(lake, "host_sampled")
    slope = interruptions.SizeSlope(float("nan"), float("nan"), 0)
    if samples is not None and "job_id" in samples.collect_schema().names():
        runs = interruptions.job_runs(samples, inter.lazy(), int(inv["gpu_count"].max() or 8)).collect()  # type: ignore[arg-type]
        by_size = interruptions.mttf_by_size(runs.lazy()).collect()
        tables["mttf_by_size"] = by_size
        slope = interruptions.size_slope(by_size)
        in_runs = int(by_size["interruptions"].sum())
        cov["mttf_by_size"] = Coverage(
            in_runs, inter.height, "interruptions", "of jobs seen running in the samples"
        )
    else:
        notes.append("host samples carry no job_id: MTTF by size is the per-GPU-rate projection only")
    summary = {
        "interruptions": inter.height,
        "interruptions_repeats_once": once.height,
        "gpu_hours": gpu_hours,
        "rate_per_gpu_day": rate * 24.0,
        "mttf_size_slope": slope.slope if slope.buckets >= interruptions.MIN_SIZE_BUCKETS else None,
        "size_buckets": slope.buckets,
        "mttf_vs_size": interruptions.slope_text(slope),
        "coverage": coverage_of(cov),
    }
    return JobResult("interruptions", tables, summary, notes)
