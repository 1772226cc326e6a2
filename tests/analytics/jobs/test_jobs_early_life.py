"""Hazard vs age: exposure bookkeeping, rates, lemon exclusion, KM inputs."""

from __future__ import annotations

import polars as pl
import pytest

from analytics.jobs import early_life

DAY = 86_400_000


def _inventory() -> pl.LazyFrame:
    # h1 installed 100 days before the window, h2 inside it (day 10), h3 after the end.
    return pl.LazyFrame(
        {
            "host_id": ["h1", "h2", "h3"],
            "cluster": "c",
            "fabric": ["roce", "infiniband", "roce"],
            "install_ts": [-100 * DAY, 10 * DAY, 40 * DAY],
        }
    )


def test_sample_age_profile_bins_samples_by_host_age_per_fabric() -> None:
    # h1 is 100 days old at ts 0 (age bin 14), h2 is installed on day 10 (bin 0 from then on).
    samples = pl.LazyFrame(
        {
            "host_id": ["h1", "h1", "h2", "h2", "h2", "zz"],
            "ts": [0, 6 * DAY, 10 * DAY, 16 * DAY, 17 * DAY, 0],
            "step_time_ms": [1.0, 3.0, 2.0, 4.0, 9.0, 100.0],
        }
    )
    got = early_life.sample_age_profile(samples, _inventory(), bin_days=7.0).collect()
    assert got.schema["fabric"] == pl.String
    assert got.select("fabric", "age_bin", "samples", "step_time_ms_mean", "age_start_d").rows() == [
        ("infiniband", 0, 2, 3.0, 0.0),
        ("infiniband", 1, 1, 9.0, 7.0),
        ("roce", 14, 1, 1.0, 98.0),
        ("roce", 15, 1, 3.0, 105.0),
    ]


def test_host_windows_are_ages_at_start_and_end() -> None:
    w = early_life.host_windows(_inventory(), 0, 30 * DAY).collect().sort("host_id")
    assert w["host_id"].to_list() == ["h1", "h2"]
    assert w["entry_age_d"].to_list() == [100.0, 0.0]
    assert w["exit_age_d"].to_list() == [130.0, 20.0]
    assert w["cohort"].to_list() == ["1969-09", "1970-01"]


def test_exposure_per_bin_adds_up_to_the_windows() -> None:
    w = early_life.host_windows(_inventory(), 0, 30 * DAY)
    exp = early_life.exposure_by_age(w, bin_days=7.0).collect()
    assert exp["host_days"].sum() == pytest.approx(30 + 20)
    first = exp.filter(pl.col("age_bin") == 0)
    assert first["host_days"].item() == pytest.approx(7.0) and first["hosts"].item() == 1


def test_hazard_is_events_over_exposure_and_keeps_empty_bins() -> None:
    w = early_life.host_windows(_inventory(), 0, 30 * DAY)
    faults = pl.LazyFrame(
        {
            "host_id": ["h2", "h2", "h1", "h1"],
            "ts": [11 * DAY, 12 * DAY, 5 * DAY, 50 * DAY],
            "kind": ["fell_off_bus", "fell_off_bus", "fell_off_bus", "fell_off_bus"],
            "gpu": [0, 1, 0, 0],
            "port": [None, None, None, None],
        }
    )
    aged = early_life.fault_ages(faults, w)
    assert aged.collect().height == 3  # the event at day 50 is outside h1's window
    hz = early_life.hazard_by_age(aged, w, 7.0, ("kind",)).collect()
    bin0 = hz.filter(pl.col("age_bin") == 0)
    assert bin0["events"].item() == 2 and bin0["hazard_per_host_day"].item() == pytest.approx(2 / 7)
    assert (hz["events"] == 0).sum() > 0


def test_repeat_offenders_are_left_out_of_the_fit_inputs() -> None:
    w = early_life.host_windows(_inventory(), 0, 30 * DAY)
    ts = [1 * DAY, 2 * DAY, 3 * DAY, 4 * DAY, 15 * DAY]
    faults = pl.LazyFrame(
        {
            "host_id": ["h1"] * 4 + ["h2"],
            "ts": ts,
            "kind": "fell_off_bus",
            "gpu": [3, 3, 3, 3, 0],
            "port": None,
        },
        schema_overrides={"port": pl.Int32},
    )
    aged = early_life.fault_ages(faults, w)
    ages, wins = early_life.fit_inputs(aged, w, ("fell_off_bus",), min_repeat=3)
    assert ages.collect()["host_id"].to_list() == ["h2"]
    assert wins.collect()["host_id"].to_list() == ["h2"]


def test_first_failures_censor_at_the_end() -> None:
    w = early_life.host_windows(_inventory(), 0, 30 * DAY)
    faults = pl.LazyFrame(
        {"host_id": ["h2"], "ts": [15 * DAY], "kind": "link_down", "gpu": None, "port": 1},
        schema_overrides={"gpu": pl.Int32},
    )
    ff = early_life.first_failures(early_life.fault_ages(faults, w), w).collect().sort("host_id")
    assert ff["event"].to_list() == [False, True]
    assert ff["stop_age_d"].to_list() == [130.0, 5.0]


def test_sample_age_profile_leaves_samples_without_a_job_out_of_the_mean() -> None:
    """HostSampled v2 writes null step time for a host without a job, v1 wrote 0."""
    samples = pl.LazyFrame(
        {"host_id": ["h2"] * 3, "ts": [10 * DAY, 11 * DAY, 12 * DAY], "step_time_ms": [2.0, None, 0.0]}
    )
    got = early_life.sample_age_profile(samples, _inventory(), bin_days=7.0).collect()
    assert got.select("samples", "step_time_ms_mean").rows() == [(3, 2.0)]
