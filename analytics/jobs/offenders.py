"""Repeat offenders: GPUs, hosts and ports that fail again and again, and their share of all faults.

Only faults with a hardware signal, or recorded incidents naming failed hardware, count
(signal-free causes such as software say nothing about a unit). A unit is a repeat offender for a failure class when it has ≥ ``min_events``.
"""

from __future__ import annotations

from typing import Literal

import polars as pl

from schemas.taxonomy import KIND_CAUSE

Scope = Literal["gpu", "host", "port"]
SCOPES: tuple[Scope, ...] = ("gpu", "host", "port")


# Recorded incidents of these causes name failed hardware (their kind is the cause). Causes that a
# JobInterrupted also carries as a signal-free kind (psu, ssd, thermal, …) stay out: the two could
# not be told apart, and a signal-free interruption says nothing about a unit.
INCIDENT_HARDWARE_KINDS = (
    "faulty_gpu",
    "hbm3",
    "gpu_sram",
    "gpu_system_processor",
    "network",
    "server_chassis",
    "io_expansion_board",
    "cpu",
    "system_memory",
    "power",
    "fan",
    "pcie",
    "storage",
)


def hardware_faults(faults: pl.LazyFrame) -> pl.LazyFrame:
    """Faults whose kind has a hardware signal (XID or link event), or incidents naming failed hardware."""
    return faults.filter(pl.col("kind").is_in([*KIND_CAUSE, *INCIDENT_HARDWARE_KINDS]))


def unit_counts(faults: pl.LazyFrame, scope: Scope) -> pl.LazyFrame:
    """Faults per unit of ``scope`` and failure class: scope, scope_key, kind, events, first/last ts."""
    if scope == "gpu":
        frame = faults.filter(pl.col("gpu").is_not_null())
        key = pl.format("{}/{}", pl.col("host_id"), pl.col("gpu"))
    elif scope == "port":
        frame = faults.filter(pl.col("port").is_not_null())
        key = pl.format("{}/{}", pl.col("host_id"), pl.col("port"))
    else:
        frame, key = faults, pl.col("host_id")
    return (
        hardware_faults(frame)
        .group_by(key.alias("scope_key"), "host_id", "cluster", "kind")
        .agg(
            pl.len().alias("events"),
            pl.col("ts").min().alias("first_ts"),
            pl.col("ts").max().alias("last_ts"),
        )
        .with_columns(pl.lit(scope).alias("scope"))
        .select("scope", "scope_key", "host_id", "cluster", "kind", "events", "first_ts", "last_ts")
    )


def offenders(faults: pl.LazyFrame, min_events: int = 3) -> pl.LazyFrame:
    """Every repeat offender at every scope, most events first."""
    parts = [unit_counts(faults, s).filter(pl.col("events") >= min_events) for s in SCOPES]
    return pl.concat(parts).sort(["events", "scope", "scope_key"], descending=[True, False, False])


def offender_share(faults: pl.LazyFrame, min_events: int = 3) -> pl.LazyFrame:
    """Per scope and failure class (plus ``all``): units with faults, offenders, and offenders' share.

    In the ``all`` row a unit is an offender when it repeats in any one class, and only the
    events of its repeating classes count as offender events.
    """
    rows = []
    for scope in SCOPES:
        counts = unit_counts(faults, scope).with_columns((pl.col("events") >= min_events).alias("_off"))
        off_events = pl.col("events").filter(pl.col("_off")).sum()
        per_class = counts.group_by("scope", "kind").agg(
            pl.len().cast(pl.Int64).alias("units"),
            pl.col("_off").sum().cast(pl.Int64).alias("offenders"),
            off_events.cast(pl.Int64).alias("offender_events"),
            pl.col("events").sum().cast(pl.Int64).alias("events"),
        )
        overall = counts.group_by("scope").agg(
            pl.lit("all").alias("kind"),
            pl.col("scope_key").n_unique().cast(pl.Int64).alias("units"),
            pl.col("scope_key").filter(pl.col("_off")).n_unique().cast(pl.Int64).alias("offenders"),
            off_events.cast(pl.Int64).alias("offender_events"),
            pl.col("events").sum().cast(pl.Int64).alias("events"),
        )
        rows += [per_class, overall]
    return (
        pl.concat(rows)
        .with_columns(
            (pl.col("offender_events") / pl.col("events")).alias("share_of_faults"),
            (pl.col("offenders") / pl.col("units")).alias("share_of_units"),
        )
        .sort("scope", "kind")
    )
