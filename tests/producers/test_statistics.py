"""Statistical checks on the ground truth and the stream, as analytics will read them.

Each runs the real ``run_simulation`` path and reads the truth files (and the Parquet lake),
never the simulator's internals. Fixed seeds: the outcomes are reproducible, not flaky.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
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
    request = SimulationRequest(fleet=cfg, days=days, seed=seed, start_ts=START, interval_s=30 * 86_400,
                                sink="null", truth_out=truth)  # fmt: skip
    run_simulation(settings, request, sink=NullSink(encode=False))
    manifest = json.loads((truth / "manifest.json").read_text())
    return (
        manifest,
        pq.read_table(truth / "faults.parquet").to_pydict(),
        pq.read_table(truth / "hosts.parquet").to_pydict(),
    )


QUIET = {"correctable_ecc_per_gpu_day": 0, "app_xid_per_host_day": 0, "correctable_aer_per_gpu_day": 0}
NO_FLAPS = {
    "roce": {"step_time_ms": 1000, "bus_bw_gbps": 360, "symbol_errors_per_port_s": 0.02, "link_fault_weight": 1.3,
             "noise_flaps_per_port_day": 0},
    "infiniband": {"step_time_ms": 990, "bus_bw_gbps": 372, "symbol_errors_per_port_s": 0.005,
                   "link_fault_weight": 0.7, "noise_flaps_per_port_day": 0},
}  # fmt: skip


def test_weibull_shape_is_recovered_from_the_truth(settings, tmp_path: Path) -> None:
    # Meta scale, 5x Llama 3's rate so that thousands of early-life failures give a tight estimate
    cfg = config_with(
        "meta-48k", lemons={"fraction": 0}, slow={"fraction": 0}, noise=QUIET, fabrics=NO_FLAPS,
        failures={"interruptions_per_gpu_day": 5 * 419 / (16_384 * 54), "weibull_shape": 0.7},
    )  # fmt: skip
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
        "meta-48k", lemons={"fraction": 0}, slow={"fraction": 0}, noise=QUIET, fabrics=NO_FLAPS,
        failures={"interruptions_per_gpu_day": 3 * 419 / (16_384 * 54)},
    )  # fmt: skip
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
    cfg = config_with("demo", lemons={"fraction": 0}, slow={"fraction": 0.1}, noise=QUIET)
    request = SimulationRequest(fleet=cfg, days=3, seed=5, start_ts=START, interval_s=3600, sink="parquet",
                                out=tmp_path / "lake", truth_out=tmp_path / "truth")  # fmt: skip
    run_simulation(settings, request)
    samples = pq.read_table(
        tmp_path / "lake" / "host_sampled", columns=["host_id", "cluster", "ts", "step_time_ms"]
    )
    hosts = pq.read_table(tmp_path / "truth" / "hosts.parquet").to_pylist()
    slow = {h["host_id"]: h for h in hosts if h["slow_factor"] is not None}
    host_col = samples.column("host_id").to_numpy(zero_copy_only=False)
    ts = samples.column("ts").to_numpy()
    step = samples.column("step_time_ms").to_numpy()
    cluster = samples.column("cluster").to_numpy(zero_copy_only=False)
    healthy = ~np.isin(host_col, list(slow))
    checked = 0
    for host_id, h in slow.items():
        mine = (host_col == host_id) & (ts >= h["slow_onset_ts"])
        if mine.sum() < 10:
            continue
        peers = healthy & (cluster == h["cluster"])
        baseline = np.median(step[peers])
        ratios = step[mine] / baseline
        if h["slow_intermittent"]:
            slow_share = np.mean(ratios > 1 + h["slow_factor"] / 2)
            assert abs(slow_share - h["slow_duty"]) < 0.35
            assert np.median(ratios[ratios > 1 + h["slow_factor"] / 2]) == pytest.approx(
                1 + h["slow_factor"], abs=0.015
            )
        else:
            assert np.median(ratios) == pytest.approx(1 + h["slow_factor"], abs=0.015)
        checked += 1
    assert checked >= 0.6 * len(slow) and checked >= 20
    # healthy hosts are tight around their cluster's median: a 3 % host stands out
    roce = healthy & (cluster == "rsc-roce")
    spread = np.median(np.abs(step[roce] / np.median(step[roce]) - 1)) * 1.4826
    assert spread < 0.01
    assert pc.min(samples.column("step_time_ms")).as_py() > 0
