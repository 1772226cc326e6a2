"""Early-life failure curves: hazard vs host age per mode and cohort, survival inputs, the bathtub.

Host age is event ts − install_ts (from the inventory). Each host is observed over its own age
window [age at start, age at end] of the observation period, so hazards are events / exposure.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from analytics.jobs.inferred_faults import EARLY_LIFE_KINDS
from analytics.jobs.source import MS_PER_DAY, step_time
from schemas.taxonomy import IMPORTED_RACK

HOST_YEAR_DAYS = 365.25


def has_install_date() -> pl.Expr:
    """A real install date: ``install_ts`` present and after the epoch, on a host not created by an import.

    Without one a host's age, hence every age-based table and the early-life fit, is unknown.
    """
    return pl.col("install_ts").is_not_null() & (pl.col("install_ts") > 0) & (pl.col("rack") != IMPORTED_RACK)


def host_windows(inventory: pl.LazyFrame, start_ts: int, end_ts: int) -> pl.LazyFrame:
    """Per host: cohort (install month) and its observed age window [entry_age_d, exit_age_d]."""
    entry = (pl.max_horizontal(pl.lit(start_ts), pl.col("install_ts")) - pl.col("install_ts")) / MS_PER_DAY
    exit_ = (pl.lit(end_ts) - pl.col("install_ts")) / MS_PER_DAY
    cohort = pl.from_epoch(pl.col("install_ts"), time_unit="ms").dt.strftime("%Y-%m")
    return (
        inventory.select("host_id", "cluster", "fabric", "install_ts")
        .with_columns(entry.alias("entry_age_d"), exit_.alias("exit_age_d"), cohort.alias("cohort"))
        .filter(pl.col("exit_age_d") > pl.col("entry_age_d"))
    )


def fault_ages(faults: pl.LazyFrame, windows: pl.LazyFrame) -> pl.LazyFrame:
    """Faults with the host's age at the event (days) and cohort, kept if inside the host's window."""
    age = (pl.col("ts") - pl.col("install_ts")) / MS_PER_DAY
    return (
        faults.join(windows.drop("cluster"), on="host_id", how="inner")
        .with_columns(age.alias("age_d"))
        .filter((pl.col("age_d") >= pl.col("entry_age_d")) & (pl.col("age_d") <= pl.col("exit_age_d")))
    )


def repeat_offender_hosts(faults: pl.LazyFrame, min_events: int = 3) -> pl.LazyFrame:
    """(host_id, kind) pairs where one GPU / port / the host has ≥ ``min_events`` faults of that kind.

    These are lemons: their repeats are not early-life hazard and are left out of the fit.
    """
    unit = pl.coalesce(pl.col("gpu").cast(pl.String), pl.col("port").cast(pl.String), pl.lit("host"))
    return (
        faults.with_columns(unit.alias("_unit"))
        .group_by("host_id", "kind", "_unit")
        .agg(pl.len().alias("n"))
        .filter(pl.col("n") >= min_events)
        .select("host_id", "kind")
        .unique()
    )


def exposure_by_age(windows: pl.LazyFrame, bin_days: float = 7.0, by: Sequence[str] = ()) -> pl.LazyFrame:
    """Host-days of observation per age bin (``age_bin`` = floor(age / bin_days)) and groups."""
    max_bin = windows.select((pl.col("exit_age_d").max() / bin_days).floor().cast(pl.Int64)).collect().item()
    bins = pl.LazyFrame({"age_bin": pl.int_range(0, (max_bin or 0) + 1, eager=True)})
    lo = pl.col("age_bin") * bin_days
    overlap = pl.min_horizontal(pl.col("exit_age_d"), lo + bin_days) - pl.max_horizontal(
        pl.col("entry_age_d"), lo
    )
    return (
        windows.join(bins, how="cross")
        .with_columns(overlap.alias("host_days"))
        .filter(pl.col("host_days") > 0)
        .group_by(*by, "age_bin")
        .agg(pl.col("host_days").sum(), pl.col("host_id").n_unique().alias("hosts"))
    )


def sample_age_profile(samples: pl.LazyFrame, inventory: pl.LazyFrame, bin_days: float = 7.0) -> pl.LazyFrame:
    """Host samples per fabric and host-age bin: how many, and their mean step time.

    The exposure side of a sample-based hazard, and whether young hosts run slower. The join key
    stays a string, but ``fabric`` is cast to Categorical on the small inventory first, so the
    group-by over every sample hashes integer codes (bench/bench_analytics.py, hazard_by_age).
    """
    bin_ms = round(bin_days * MS_PER_DAY)
    hosts = inventory.select("host_id", pl.col("fabric").cast(pl.Categorical), "install_ts")
    age_bin = ((pl.col("ts") - pl.col("install_ts")) // bin_ms).alias("age_bin")
    return (
        samples.select("host_id", "ts", step_time())
        .join(hosts, on="host_id", how="inner")
        .group_by("fabric", age_bin)
        .agg(pl.len().alias("samples"), pl.col("step_time_ms").mean().alias("step_time_ms_mean"))
        .with_columns(pl.col("fabric").cast(pl.String), (pl.col("age_bin") * bin_days).alias("age_start_d"))
        .sort("fabric", "age_bin")
    )


def hazard_by_age(
    aged_faults: pl.LazyFrame,
    windows: pl.LazyFrame,
    bin_days: float = 7.0,
    by: Sequence[str] = ("kind",),
) -> pl.LazyFrame:
    """Failure hazard per age bin: events / host-days, also per host-year (bins with no events are kept).

    ``by`` may contain ``kind`` and any window column (``cohort``, ``fabric``, ``cluster``).
    """
    window_keys = [k for k in by if k != "kind"]
    exposure = exposure_by_age(windows, bin_days, window_keys)
    events = (
        aged_faults.with_columns((pl.col("age_d") / bin_days).floor().cast(pl.Int64).alias("age_bin"))
        .group_by(*by, "age_bin")
        .agg(pl.len().alias("events"))
    )
    if "kind" in by:
        kinds = aged_faults.select("kind").unique()
        exposure = exposure.join(kinds, how="cross")
    return (
        exposure.join(events, on=[*by, "age_bin"], how="left")
        .with_columns(
            pl.col("events").fill_null(0),
            (pl.col("age_bin") * bin_days).alias("age_start_d"),
        )
        .with_columns(
            (pl.col("events") / pl.col("host_days")).alias("hazard_per_host_day"),
            (pl.col("events") / pl.col("host_days") * HOST_YEAR_DAYS).alias("hazard_per_host_year"),
        )
        .sort(*by, "age_bin")
    )


def bathtub(aged_faults: pl.LazyFrame, windows: pl.LazyFrame, bin_days: float = 7.0) -> pl.LazyFrame:
    """All modes together: hazard vs age, plus the early-life modes' share of it per bin."""
    early = pl.col("kind").is_in(EARLY_LIFE_KINDS)
    tagged = aged_faults.with_columns(
        pl.when(early).then(pl.lit("early_life_modes")).otherwise(pl.lit("other_modes")).alias("group")
    )
    per_group = hazard_by_age(tagged.drop("kind").rename({"group": "kind"}), windows, bin_days, ("kind",))
    total = hazard_by_age(aged_faults.with_columns(pl.lit("all").alias("kind")), windows, bin_days, ("kind",))
    return pl.concat([total, per_group]).rename({"kind": "group"}).sort("group", "age_bin")


def first_failures(
    aged_faults: pl.LazyFrame, windows: pl.LazyFrame, kinds: Sequence[str] | None = None
) -> pl.LazyFrame:
    """Per host: entry age, exit age (first failure in window, else end) and event flag — KM input."""
    pick = aged_faults if kinds is None else aged_faults.filter(pl.col("kind").is_in(list(kinds)))
    first = pick.group_by("host_id").agg(pl.col("age_d").min().alias("fail_age_d"))
    return (
        windows.join(first, on="host_id", how="left")
        .with_columns(
            pl.col("fail_age_d").is_not_null().alias("event"),
            pl.coalesce(pl.col("fail_age_d"), pl.col("exit_age_d")).alias("stop_age_d"),
        )
        .select("host_id", "cohort", "fabric", "entry_age_d", "stop_age_d", "event")
    )


def fit_inputs(
    aged_faults: pl.LazyFrame, windows: pl.LazyFrame, kinds: Sequence[str], min_repeat: int = 3
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """(failure ages, host windows) for a power-law fit of ``kinds``, lemon hosts of those kinds left out."""
    lemons = repeat_offender_hosts(aged_faults.filter(pl.col("kind").is_in(list(kinds))), min_repeat)
    excluded = lemons.select("host_id").unique()
    ages = aged_faults.filter(pl.col("kind").is_in(list(kinds))).join(excluded, on="host_id", how="anti")
    return ages.select("host_id", "kind", "age_d"), windows.join(excluded, on="host_id", how="anti")
