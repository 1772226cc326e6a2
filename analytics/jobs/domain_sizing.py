"""Maintenance-domain sizing: the U-shaped cost of maintenance vs domain size, its optimum and sensitivity.

Cost is capacity lost, in hosts (host-hours per hour), for a cluster of H hosts split into
domains of D hosts; the derivation is in docs/ANALYTICS.md ("Maintenance-domain model"):

    C(D) = D + ρ·min(D + J, H) · [ H/(D·T) + H·λ/(1 + D·λ·(W + R)) ]
         buffer   work lost per drain   planned visits   failure-driven drains (batched)
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import polars as pl


class DomainModel(NamedTuple):
    """Inputs of the cost model (rates observed from the lake, policies assumed)."""

    hosts: int  # H: hosts in a cluster (domains partition one cluster)
    failure_rate: float  # λ: repair-needing faults per host-hour
    repair_hours: float  # R: hours a drained domain is out
    job_hosts: int  # J: hosts of a typical large job
    restart_hours: float = 0.5  # ρ: work lost per interruption (since checkpoint + restart), hours
    batch_hours: float = 0.0  # W: how long a failed host may wait for its domain's drain
    cycle_hours: float | None = 720.0  # T: planned-maintenance cycle (every domain once per T), None = off


class DomainOptimum(NamedTuple):
    size: int
    cost_hosts: float  # C(D*), hosts' worth of capacity lost
    cost_fraction: float  # C(D*) / H


def cost_components(model: DomainModel, sizes: np.ndarray) -> dict[str, np.ndarray]:
    """Buffer, interruption and total cost (hosts) for each domain size in ``sizes``."""
    d = np.asarray(sizes, dtype=float)
    h, lam = float(model.hosts), model.failure_rate
    per_drain = model.restart_hours * np.minimum(d + model.job_hosts, h)  # host-hours lost per drain
    failure_drains = h * lam / (1.0 + d * lam * (model.batch_hours + model.repair_hours))  # per hour
    planned_drains = h / (d * model.cycle_hours) if model.cycle_hours else np.zeros_like(d)
    buffer = d
    interruption = (failure_drains + planned_drains) * per_drain
    return {
        "buffer": buffer,
        "interruption": interruption,
        "total": buffer + interruption,
        "drains_per_day": (failure_drains + planned_drains) * 24.0,
    }


def optimum(model: DomainModel) -> DomainOptimum:
    """The domain size (1..H hosts) of least total cost, found over every integer size."""
    sizes = np.arange(1, max(model.hosts, 1) + 1)
    total = cost_components(model, sizes)["total"]
    i = int(np.argmin(total))
    return DomainOptimum(int(sizes[i]), float(total[i]), float(total[i] / model.hosts))


def cost_curve(model: DomainModel, points: int = 120) -> pl.DataFrame:
    """Cost components on a log-spaced grid of domain sizes (for the U-shaped plot)."""
    sizes = np.unique(np.geomspace(1, max(model.hosts, 1), points).round().astype(int))
    comp = cost_components(model, sizes)
    return pl.DataFrame({"domain_hosts": sizes, **comp}).with_columns(
        (pl.col("total") / model.hosts).alias("total_fraction")
    )


def sensitivity(model: DomainModel, factors: tuple[float, ...] = (0.5, 1.0, 1.5)) -> pl.DataFrame:
    """Optimum under ±50 % failure rate and repair time; regret = cost of keeping the base optimum."""
    base = optimum(model)
    rows = []
    for lam_f in factors:
        for rep_f in factors:
            m = model._replace(
                failure_rate=model.failure_rate * lam_f, repair_hours=model.repair_hours * rep_f
            )
            best = optimum(m)
            at_base = float(cost_components(m, np.array([base.size]))["total"][0])
            rows.append(
                {
                    "failure_rate_factor": lam_f,
                    "repair_time_factor": rep_f,
                    "optimal_domain_hosts": best.size,
                    "cost_hosts": best.cost_hosts,
                    "cost_fraction": best.cost_fraction,
                    "cost_at_base_optimum": at_base,
                    "regret_pct": (at_base / best.cost_hosts - 1.0) * 100.0,
                }
            )
    return pl.DataFrame(rows)


def failure_rate(repair_faults: int, host_hours: float) -> float:
    """λ: repair-needing faults per host-hour of observation."""
    return repair_faults / host_hours if host_hours > 0 else float("nan")
