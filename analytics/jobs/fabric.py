"""Fabric A/B (RoCE vs InfiniBand): sample distributions, link errors, slow-host incidence, time to repair.

Which hosts are slow is ``analytics.jobs.slow_view``'s (the detector's own peer test).

Every function takes LazyFrames and returns a LazyFrame; the significance tests run on the
collected per-host values in ``analytics.jobs.stats``.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from analytics.jobs.source import MS_PER_DAY, MS_PER_HOUR, step_time

QUANTILES = (0.5, 0.9, 0.99)
METRICS = ("step_time_ms", "bus_bw_gbps")


def with_fabric(frame: pl.LazyFrame, inventory: pl.LazyFrame | None) -> pl.LazyFrame:
    """Add the host's fabric from the inventory unless the frame carries it already.

    The joined ``fabric`` is Categorical: the inventory is small, so the cast is free, and a
    group-by on it over millions of samples hashes integer codes instead of strings (about 2×
    faster on the sample tables; bench/bench_analytics.py). Callers cast it back to String.
    """
    if "fabric" in frame.collect_schema().names():
        return frame
    if inventory is None:
        raise ValueError("frame has no fabric column and no inventory was given")
    fabrics = inventory.select("host_id", pl.col("fabric").cast(pl.Categorical))
    return frame.join(fabrics, on="host_id", how="inner")


def _metric(name: str) -> pl.Expr:
    return step_time() if name == "step_time_ms" else pl.col(name)


def sample_percentiles(
    samples: pl.LazyFrame, inventory: pl.LazyFrame | None, metrics: Sequence[str] = METRICS
) -> pl.LazyFrame:
    """p50/p90/p99 (and mean) of each metric per fabric over all host samples."""
    if inventory is None or "fabric" in samples.collect_schema().names():
        frame = with_fabric(samples, inventory).select(
            pl.col("host_id").alias("host"), "fabric", *map(_metric, metrics)
        )
    else:
        # The inventory's row number stands for the host: the distinct count then runs over
        # integers instead of every sample's host_id string (the slowest aggregate here).
        hosts = inventory.select("host_id", pl.col("fabric").cast(pl.Categorical)).with_row_index("host")
        frame = samples.select("host_id", *map(_metric, metrics)).join(hosts, on="host_id", how="inner")
    aggs: list[pl.Expr] = [pl.len().alias("samples"), pl.col("host").n_unique().alias("hosts")]
    for m in metrics:
        aggs += [pl.col(m).quantile(q, "linear").alias(f"{m}_p{round(q * 100)}") for q in QUANTILES]
        aggs.append(pl.col(m).mean().alias(f"{m}_mean"))
    return (
        frame.select("host", "fabric", *metrics)
        .group_by("fabric")
        .agg(aggs)
        .with_columns(pl.col("fabric").cast(pl.String))
        .sort("fabric")
    )


def host_medians(
    samples: pl.LazyFrame, inventory: pl.LazyFrame | None, metrics: Sequence[str] = METRICS
) -> pl.LazyFrame:
    """Per host: fabric, sample count and the median of each metric (the unit of the A/B test)."""
    return (
        with_fabric(samples, inventory)
        .select("host_id", "fabric", *map(_metric, metrics))
        .group_by("host_id", "fabric")
        .agg(pl.len().alias("samples"), *[pl.col(m).median() for m in metrics])
        .with_columns(pl.col("fabric").cast(pl.String))
        .sort("host_id")
    )


def host_days(inventory: pl.LazyFrame, start_ts: int, end_ts: int) -> pl.LazyFrame:
    """Per host: fabric and days observed (from max(start, install) to end)."""
    since = pl.max_horizontal(pl.lit(start_ts), pl.col("install_ts"))
    return inventory.select(
        "host_id", "fabric", ((pl.lit(end_ts) - since) / MS_PER_DAY).clip(0).alias("days")
    ).filter(pl.col("days") > 0)


def link_error_rates(link: pl.LazyFrame, observed: pl.LazyFrame) -> pl.LazyFrame:
    """Per host: link downs and flaps (flap ``count`` summed) per host-day; hosts with none have 0."""
    per_host = link.group_by("host_id").agg(
        (pl.col("kind") == "down").sum().alias("downs"),
        pl.when(pl.col("kind") == "flap").then(pl.col("count")).otherwise(0).sum().alias("flaps"),
    )
    return (
        observed.join(per_host, on="host_id", how="left")
        .with_columns(pl.col("downs", "flaps").fill_null(0))
        .with_columns(
            (pl.col("downs") / pl.col("days")).alias("downs_per_host_day"),
            (pl.col("flaps") / pl.col("days")).alias("flaps_per_host_day"),
        )
    )


def link_rates_by_fabric(per_host: pl.LazyFrame) -> pl.LazyFrame:
    """Pooled link-error rates per fabric: events / host-days."""
    return (
        per_host.group_by("fabric")
        .agg(pl.len().alias("hosts"), pl.col("days").sum().alias("host_days"), pl.col("downs", "flaps").sum())
        .with_columns(
            (pl.col("downs") / pl.col("host_days")).alias("downs_per_host_day"),
            (pl.col("flaps") / pl.col("host_days")).alias("flaps_per_host_day"),
        )
        .sort("fabric")
    )


def slow_hosts_from_findings(findings: pl.LazyFrame) -> pl.LazyFrame:
    """Hosts the slow-host detector raised a finding for (``scope_key`` starts with the host id)."""
    return (
        findings.filter(pl.col("detector") == "slow_host")
        .select(pl.col("scope_key").str.split("/").list.first().alias("host_id"))
        .unique()
        .with_columns(pl.lit(True).alias("is_slow"))
    )


def slow_incidence(flags: pl.LazyFrame, inventory: pl.LazyFrame) -> pl.LazyFrame:
    """Slow hosts per 1,000 hosts, per fabric (hosts never flagged count as not slow)."""
    return (
        inventory.select("host_id", "fabric")
        .join(flags.select("host_id", "is_slow"), on="host_id", how="left")
        .group_by("fabric")
        .agg(pl.len().alias("hosts"), pl.col("is_slow").fill_null(False).sum().alias("slow_hosts"))
        .with_columns((pl.col("slow_hosts") / pl.col("hosts") * 1000).alias("slow_per_1000_hosts"))
        .sort("fabric")
    )


def repair_episodes(actions: pl.LazyFrame, keep_open: bool = False) -> pl.LazyFrame:
    """Per host, each maintenance episode from its first action to ``returned``; open episodes
    (``end_ts`` null) dropped unless ``keep_open``."""
    ordered = actions.select("host_id", "ts", "kind", "operation").sort("host_id", "ts")
    ended = (pl.col("kind") == "returned").cast(pl.Int32)
    episode = (ended.cum_sum().over("host_id") - ended).alias("episode")
    return (
        ordered.with_columns(episode)
        .group_by("host_id", "episode")
        .agg(
            pl.col("ts").min().alias("start_ts"),
            pl.col("ts").filter(pl.col("kind") == "returned").max().alias("end_ts"),
            pl.col("operation").filter(pl.col("operation") != "drain").first().alias("operation"),
        )
        .filter(pl.col("end_ts").is_not_null() | keep_open)
        .with_columns(((pl.col("end_ts") - pl.col("start_ts")) / MS_PER_HOUR).alias("hours"))
        .sort("host_id", "episode")
    )


def repair_summary(episodes: pl.LazyFrame, inventory: pl.LazyFrame) -> pl.LazyFrame:
    """Time to repair per fabric: episodes, p50 / p90 / mean hours."""
    return (
        with_fabric(episodes, inventory)
        .group_by("fabric")
        .agg(
            pl.len().alias("episodes"),
            pl.col("hours").quantile(0.5, "linear").alias("ttr_p50_h"),
            pl.col("hours").quantile(0.9, "linear").alias("ttr_p90_h"),
            pl.col("hours").mean().alias("ttr_mean_h"),
        )
        .with_columns(pl.col("fabric").cast(pl.String))
        .sort("fabric")
    )
