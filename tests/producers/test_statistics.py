"""Statistical checks on the ground truth and the stream, as analytics will read them.

Each runs the real ``run_simulation`` path and reads the truth files (and the Delta lake),
never the simulator's internals. Fixed seeds: the outcomes are reproducible, not flaky.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest
from scipy import stats

from producers import hazard
from producers.runner import SimulationRequest, run_simulation
from producers.sinks.base import NullSink
from tests.producers.conftest import START, config_with

DAY_MS = 86_400_000


def _truth(settings, tmp_path: Path, cfg, days: float, seed: int = 7) -> tuple[dict, dict, dict]:
    """Run ``cfg`` through the real run path with samples every 30 days; return the truth files."""
    truth = tmp_path / "truth"
    request = SimulationRequest(
        fleet=cfg, days=days, seed=seed, start_ts=START, interval_s=30 * 86_400, sink="null", truth_out=truth
    )
    run_simulation(settings, request, sink=NullSink(encode=False))
    manifest = json.loads((truth / "manifest.json").read_text())
    return (
        manifest,
        pq.read_table(truth / "faults.parquet").to_pydict(),
        pq.read_table(truth / "hosts.parquet").to_pydict(),
    )


QUIET = {"correctable_ecc_per_gpu_day": 0, "app_xid_per_host_day": 0, "correctable_aer_per_gpu_day": 0}
NO_FLAPS = {
    "roce": {
        "step_time_ms": 1000,
        "bus_bw_gbps": 360,
        "symbol_errors_per_port_s": 0.02,
        "link_fault_weight": 1.3,
        "noise_flaps_per_port_day": 0,
    },
    "infiniband": {
        "step_time_ms": 990,
        "bus_bw_gbps": 372,
        "symbol_errors_per_port_s": 0.005,
        "link_fault_weight": 0.7,
        "noise_flaps_per_port_day": 0,
    },
}


def test_weibull_shape_is_recovered_from_the_truth(settings, tmp_path: Path) -> None:
    # Meta scale, 5x Llama 3's rate so that thousands of early-life failures give a tight estimate
    cfg = config_with(
        "meta-48k",
        lemons={"fraction": 0},
        slow={"fraction": 0},
        noise=QUIET,
        fabrics=NO_FLAPS,
        failures={"interruptions_per_gpu_day": 5 * 419 / (16_384 * 54), "weibull_shape": 0.7},
    )
    manifest, faults, hosts = _truth(settings, tmp_path, cfg, days=180)
    install = np.array(hosts["install_ts"])
    a0 = (np.maximum(manifest["start_ts"], install) - install) / DAY_MS
    a1 = (manifest["end_ts"] - install) / DAY_MS
    observed = a1 > a0
    early = np.array(faults["phase"]) == "early_life"
    ages = np.array(faults["host_age_days"])[early]
    assert len(ages) > 3000
    fit = hazard.fit(ages, a0[observed], a1[observed])
    assert manifest["resolved"]["weibull_shape"] == 0.7
    assert fit.shape == pytest.approx(0.7, rel=0.10)
    assert fit.scale_days == pytest.approx(manifest["resolved"]["weibull_scale_days"], rel=0.25)


def test_fault_mix_matches_the_configured_cause_mix(settings, tmp_path: Path) -> None:
    cfg = config_with(
        "meta-48k",
        lemons={"fraction": 0},
        slow={"fraction": 0},
        noise=QUIET,
        fabrics=NO_FLAPS,
        failures={"interruptions_per_gpu_day": 3 * 419 / (16_384 * 54)},
    )
    manifest, faults, _ = _truth(settings, tmp_path, cfg, days=90)
    phase = np.array(faults["phase"])
    cause = np.array(faults["cause"])[(phase == "early_life") | (phase == "random")]
    mix = manifest["resolved"]["cause_mix"]
    names = sorted(mix)
    observed = np.array([(cause == c).sum() for c in names])
    expected = np.array([mix[c] for c in names]) * observed.sum()
    assert observed.sum() > 4000
    assert stats.chisquare(observed, expected).pvalue > 0.001
    # the absolute rate: the Poisson count agrees with the calibrated expectation (guard drops are few)
    n = int(np.sum(np.array(faults["interrupts_job"])))
    assert (
        abs(n - manifest["resolved"]["expected_interruptions"])
        < 4 * np.sqrt(n) + manifest["faults"]["guard_dropped"]
    )


def test_slow_hosts_step_time_ratio_matches_their_factor(settings, tmp_path: Path) -> None:
    # one sample per 30-minute episode, so an intermittent host is either slow or not in a sample
    cfg = config_with("demo", lemons={"fraction": 0}, slow={"fraction": 0.1}, noise=QUIET)
    request = SimulationRequest(
        fleet=cfg,
        days=3,
        seed=5,
        start_ts=START,
        interval_s=1800,
        sink="parquet",
        out=tmp_path / "lake",
        truth_out=tmp_path / "truth",
    )
    run_simulation(settings, request)
    samples = pl.read_delta(
        str(tmp_path / "lake" / "host_sampled"),
        columns=["host_id", "cluster", "ts", "job_id", "step_time_ms"],
    )
    hosts = pl.read_parquet(tmp_path / "truth" / "hosts.parquet")
    slow = {h["host_id"]: h for h in hosts.filter(pl.col("slow_factor").is_not_null()).to_dicts()}
    busy = samples.filter(pl.col("job_id").is_not_null())
    assert (busy["step_time_ms"] > 0).all()
    assert (samples.filter(pl.col("job_id").is_null())["step_time_ms"] == 0).all()
    # a host's reference is its job's healthy hosts at the same time: jobs run at their own paces
    healthy = busy.filter(~pl.col("host_id").is_in(list(slow)))
    base = healthy.group_by("job_id", "ts").agg(pl.col("step_time_ms").median().alias("base"), pl.len())
    rel = busy.join(base.filter(pl.col("len") >= 3), on=["job_id", "ts"]).with_columns(
        (pl.col("step_time_ms") / pl.col("base")).alias("ratio")
    )
    checked = 0
    for host_id, h in slow.items():
        ratios = rel.filter((pl.col("host_id") == host_id) & (pl.col("ts") >= h["slow_onset_ts"]))["ratio"]
        ratios = ratios.to_numpy()
        if len(ratios) < 10:
            continue
        if h["slow_intermittent"]:
            on = ratios > 1 + h["slow_factor"] / 2
            assert abs(on.mean() - h["slow_duty"]) < 0.35
            assert np.median(ratios[on]) == pytest.approx(1 + h["slow_factor"], abs=0.015)
        else:
            assert np.median(ratios) == pytest.approx(1 + h["slow_factor"], abs=0.015)
        checked += 1
    assert checked >= 0.6 * len(slow) and checked >= 20
    # healthy hosts are tight around their job's median: a 2 % host stands out
    spread = (
        np.median(np.abs(rel.filter(~pl.col("host_id").is_in(list(slow)))["ratio"].to_numpy() - 1)) * 1.4826
    )
    assert spread < 0.01
