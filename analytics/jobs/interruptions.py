"""Job interruptions: a root-cause table shaped like Llama 3's Table 5, and job MTTF vs job size.

MTTF(N) = job-hours of jobs of N GPUs / their interruptions; if failures hit GPUs independently,
it falls as 1/N, which the log-log slope checks.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import polars as pl

from analytics.jobs.incidents import normalised_cause
from analytics.jobs.source import MS_PER_HOUR
from schemas.published import LLAMA3_CAUSE_MIX
from schemas.taxonomy import UNCLASSIFIED

# Meta research clusters ("Revisiting reliability in large-scale ML research clusters", 2024).
META_MTTF_HOURS: dict[int, float] = {8: 47.7 * 24, 1024: 7.9, 16384: 1.8}
# A slope needs two job sizes with interruptions; with fewer there is no slope to report.
MIN_SIZE_BUCKETS = 2


class SizeSlope(NamedTuple):
    """log MTTF = a + slope · log N, fitted over size buckets weighted by interruptions."""

    slope: float
    intercept: float
    buckets: int


def root_cause_table(interrupted: pl.LazyFrame) -> pl.LazyFrame:
    """cause, count, % of all interruptions (largest first), with Llama 3's share beside it.

    ``unclassified`` (no cause, or one the source could not name) is a row of its own, so the
    shares are over every interruption, never renormalised over the classified ones.
    """
    ref = pl.LazyFrame(
        {"cause": [*LLAMA3_CAUSE_MIX, UNCLASSIFIED], "llama3_pct": [*LLAMA3_CAUSE_MIX.values(), None]},
        schema_overrides={"llama3_pct": pl.Float64},
    )
    counts = interrupted.group_by(normalised_cause(pl.col("cause")).alias("cause")).agg(
        pl.len().cast(pl.Int64).alias("count")
    )
    return (
        counts.with_columns((pl.col("count") / pl.col("count").sum() * 100).alias("pct"))
        .join(ref, on="cause", how="full", coalesce=True)
        .with_columns(pl.col("count").fill_null(0), pl.col("pct").fill_null(0.0))
        .sort(["count", "llama3_pct"], descending=True, nulls_last=True)
    )


def without_repeats(interrupted: pl.LazyFrame, max_per_host_cause: int = 1) -> pl.LazyFrame:
    """Keep the first ``max_per_host_cause`` interruptions of each (host, cause), earliest first.

    A lemon interrupts its jobs again and again; in a small fleet or a short period its repeats can
    dominate the mix. This view shows the population's causes with repeat offenders counted once.
    """
    return (
        interrupted.sort("ts")
        .with_columns(pl.int_range(pl.len()).over(["host_id", "cause"]).alias("_nth"))
        .filter(pl.col("_nth") < max_per_host_cause)
        .drop("_nth")
    )


def job_runs(samples: pl.LazyFrame, interrupted: pl.LazyFrame, gpus_per_host: int = 8) -> pl.LazyFrame:
    """Per job: hours it ran (first to last sample), GPUs, interruptions.

    GPUs come from the job's JobInterrupted ``job_gpus`` when it has one, else hosts × GPUs per host.
    """
    runs = (
        samples.filter(pl.col("job_id").is_not_null())
        .group_by("job_id")
        .agg(
            pl.col("ts").min().alias("start_ts"),
            pl.col("ts").max().alias("end_ts"),
            pl.col("host_id").n_unique().alias("hosts"),
        )
    )
    hits = (
        interrupted.filter(pl.col("job_id").is_not_null())
        .group_by("job_id")
        .agg(pl.len().alias("interruptions"), pl.col("job_gpus").max().alias("job_gpus"))
    )
    return (
        runs.join(hits, on="job_id", how="left")
        .with_columns(
            pl.col("interruptions").fill_null(0),
            pl.coalesce(pl.col("job_gpus"), pl.col("hosts") * gpus_per_host).cast(pl.Int64).alias("gpus"),
            ((pl.col("end_ts") - pl.col("start_ts")) / MS_PER_HOUR).alias("hours"),
        )
        .filter(pl.col("hours") > 0)
        .select("job_id", "gpus", "hosts", "hours", "interruptions")
    )


def mttf_by_size(runs: pl.LazyFrame) -> pl.LazyFrame:
    """Per job-size bucket (GPUs rounded down to a power of two): job-hours, interruptions, MTTF hours."""
    bucket = (2 ** pl.col("gpus").clip(1).log(2).floor()).cast(pl.Int64)
    return (
        runs.with_columns(bucket.alias("size_gpus"))
        .group_by("size_gpus")
        .agg(
            pl.len().alias("jobs"),
            pl.col("hours").sum().alias("job_hours"),
            pl.col("interruptions").sum().alias("interruptions"),
            (pl.col("gpus") * pl.col("hours")).sum().alias("gpu_hours"),
        )
        .with_columns((pl.col("job_hours") / pl.col("interruptions")).alias("mttf_hours"))
        .sort("size_gpus")
    )


def fleet_rate_per_gpu_hour(interrupted_count: int, gpu_hours: float) -> float:
    """Interruptions per GPU-hour over the whole fleet."""
    return interrupted_count / gpu_hours if gpu_hours > 0 else float("nan")


def projected_mttf(
    rate_per_gpu_hour: float, sizes: tuple[int, ...] = (8, 64, 512, 1024, 4096, 16384)
) -> pl.DataFrame:
    """MTTF(N) = 1 / (N · rate) for independent GPU failures, beside Meta's observed figures."""
    return pl.DataFrame(
        {
            "size_gpus": list(sizes),
            "projected_mttf_hours": [1.0 / (n * rate_per_gpu_hour) for n in sizes],
            "meta_mttf_hours": [META_MTTF_HOURS.get(n) for n in sizes],
        },
        schema_overrides={"meta_mttf_hours": pl.Float64},
    )


def size_slope(by_size: pl.DataFrame) -> SizeSlope:
    """Weighted least squares of log MTTF on log N over buckets with interruptions (≈ −1 expected)."""
    ok = by_size.filter((pl.col("interruptions") > 0) & (pl.col("mttf_hours") > 0))
    if ok.height < MIN_SIZE_BUCKETS:
        return SizeSlope(float("nan"), float("nan"), ok.height)
    x = np.log(ok["size_gpus"].to_numpy().astype(float))
    y = np.log(ok["mttf_hours"].to_numpy())
    w = np.sqrt(ok["interruptions"].to_numpy().astype(float))
    slope, intercept = np.polyfit(x, y, 1, w=w)
    return SizeSlope(float(slope), float(intercept), ok.height)


def slope_text(slope: SizeSlope) -> str:
    """The MTTF-vs-size finding in words; "not enough job sizes" (with the count) instead of a NaN."""
    if slope.buckets < MIN_SIZE_BUCKETS or not np.isfinite(slope.slope):
        return (
            f"not enough job sizes: {slope.buckets} size bucket(s) with interruptions, "
            f"{MIN_SIZE_BUCKETS} needed for a slope"
        )
    return f"MTTF ∝ N^{slope.slope:.2f} over {slope.buckets} size buckets"
