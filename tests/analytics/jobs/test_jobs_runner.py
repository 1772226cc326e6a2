"""The job shells on a synthetic lake with known truth: each job recovers what was put in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from analytics.jobs import run_job
from analytics.jobs.errors import MissingTableError, UnknownJobError
from analytics.lake import scan
from tests.analytics.jobs.factories import DAY, HOUR, START, SyntheticFleet, write_table

Lake = tuple[Path, dict[str, Any], SyntheticFleet]


def test_early_life_recovers_the_shape(synthetic_lake: Lake) -> None:
    lake, truth, fleet = synthetic_lake
    r = run_job("early-life", lake)
    fit = r.summary["fits"]["early_life_modes"]
    assert fit["shape_lo"] < fleet.weibull_shape < fit["shape_hi"]
    assert fit["shape"] < 1.0 and fit["shape_hi"] < 1.0  # infant mortality is detected
    lemons = r.tables["power_law_fit"].filter(pl.col("mode") == "fell_off_bus")["lemon_hosts_excluded"].item()
    assert lemons == len(truth["lemon_hosts"])
    hz = r.tables["hazard_by_mode"].filter(pl.col("kind") == "fell_off_bus")
    young = (
        hz.filter(pl.col("age_bin") < 4)["events"].sum() / hz.filter(pl.col("age_bin") < 4)["host_days"].sum()
    )
    old = (
        hz.filter(pl.col("age_bin") >= 20)["events"].sum()
        / hz.filter(pl.col("age_bin") >= 20)["host_days"].sum()
    )
    assert young > 2 * old
    assert set(r.tables["kaplan_meier"]["group"].unique()) == {"early_life_modes", "all_modes"}
    samples = scan(lake, "host_sampled").select(pl.len()).collect().item()
    assert r.tables["samples_by_age"]["samples"].sum() == samples  # every sample lands in one age bin


def test_fabric_recovers_the_configured_differences(synthetic_lake: Lake) -> None:
    lake, truth, fleet = synthetic_lake
    r = run_job("fabric", lake, n_boot=500)
    comps = r.summary["comparisons"]
    step = comps["step_time_ms"]  # roce − infiniband
    assert (step["group_a"], step["group_b"]) == ("infiniband", "roce")
    assert step["diff_lo"] <= fleet.roce_step_ms - fleet.ib_step_ms <= step["diff_hi"]
    assert comps["bus_bw_gbps"]["diff_lo"] <= fleet.roce_bw - fleet.ib_bw <= comps["bus_bw_gbps"]["diff_hi"]
    assert comps["time_to_repair_h"]["diff"] > 0 and comps["time_to_repair_h"]["p_value"] < 0.01
    flagged = set(r.tables["slow_hosts"].filter(pl.col("is_slow"))["host_id"].to_list())
    assert flagged == truth["slow_hosts"]
    assert r.tables["slow_incidence"]["slow_hosts"].sum() == fleet.slow_hosts


def test_offenders_finds_the_lemons(synthetic_lake: Lake) -> None:
    lake, truth, _ = synthetic_lake
    r = run_job("offenders", lake)
    gpu_offenders = r.tables["offenders"].filter(
        (pl.col("scope") == "gpu") & (pl.col("kind") == "fell_off_bus")
    )
    assert truth["lemon_hosts"] <= set(gpu_offenders["host_id"].to_list())


def test_interruptions_counts_every_fault_once(synthetic_lake: Lake) -> None:
    lake, truth, _ = synthetic_lake
    r = run_job("interruptions", lake)
    assert r.summary["interruptions"] == truth["faults"].height
    rc = r.tables["root_causes"]
    assert (
        rc.filter(pl.col("cause") == "software")["count"].item()
        == (truth["faults"]["kind"] == "software").sum()
    )
    assert r.summary["mttf_size_slope"] == pytest.approx(-1.0, abs=0.35)


def test_maintenance_domain_uses_observed_rates(synthetic_lake: Lake) -> None:
    lake, _, _ = synthetic_lake
    r = run_job("maintenance-domain", lake)
    model = r.summary["model"]
    assert model["hosts"] == 200 and model["failure_rate"] > 0
    assert 15 < model["repair_hours"] < 35  # median of the simulated episodes (means 20 h and 30 h)
    assert r.tables["sensitivity"].height == 9 and not r.notes


def test_unknown_job_and_missing_table(tmp_path: Path) -> None:
    with pytest.raises(UnknownJobError):
        run_job("nope", tmp_path)
    with pytest.raises(MissingTableError, match="host_inventoried"):
        run_job("early-life", tmp_path)


def _repair_lake(lake: Path, repair_hours: dict[str, list[float]]) -> None:
    """A minimal fabric lake: inventory and flat samples of the given hosts (h-roce-*, h-ib-*), plus
    one drain_requested → returned episode per entry of ``repair_hours``."""
    hosts = sorted(repair_hours)
    fab = ["roce" if h.startswith("h-roce") else "infiniband" for h in hosts]
    cluster = [f"c-{f}" for f in fab]
    n = len(hosts)
    write_table(
        lake,
        "host_inventoried",
        pl.DataFrame(
            {
                "host_id": hosts,
                "cluster": cluster,
                "fabric": fab,
                "rack": "r0",
                "maintenance_domain": "d0",
                "sku": "H100",
                "install_ts": START - 100 * DAY,
                "gpu_count": np.full(n, 8, np.int32),
                "ts": START,
            }
        ),
    )
    ts = [START + k * HOUR for k in range(3)]
    write_table(
        lake,
        "host_sampled",
        pl.DataFrame(
            {
                "host_id": [h for h in hosts for _ in ts],
                "cluster": [c for c in cluster for _ in ts],
                "ts": ts * n,
                "step_time_ms": np.full(3 * n, 1000.0, np.float32),
                "bus_bw_gbps": np.full(3 * n, 360.0, np.float32),
            }
        ),
    )
    rows: list[tuple[str, int, str, str]] = []
    for host, hours in repair_hours.items():
        t = START
        for h in hours:
            rows += [(host, t, "drain_requested", "drain"), (host, t + int(h * HOUR), "returned", "rma")]
            t += int(h * HOUR) + DAY
    acts = pl.DataFrame(rows, schema=["host_id", "ts", "kind", "operation"], orient="row")
    write_table(lake, "maintenance_action_recorded", acts)


def test_fabric_time_to_repair_compares_hosts_not_episodes(tmp_path: Path) -> None:
    """One RoCE host with 60 long repairs is one host of 20, not 60 of 117 episodes: no significant difference."""
    rng = np.random.default_rng(7)
    hours = {f"h-ib-{i:02d}": list(rng.gamma(4.0, 5.0, 3)) for i in range(20)}
    hours |= {f"h-roce-{i:02d}": list(rng.gamma(4.0, 5.0, 3)) for i in range(19)}
    hours["h-roce-99"] = list(rng.gamma(4.0, 25.0, 60))
    _repair_lake(tmp_path, hours)
    ttr = run_job("fabric", tmp_path, n_boot=200).summary["comparisons"]["time_to_repair_h"]
    assert (ttr["group_a"], ttr["group_b"]) == ("infiniband", "roce")
    assert (ttr["n_a"], ttr["n_b"]) == (20, 20)
    assert ttr["p_value"] > 0.05
    assert ttr["diff_lo"] <= 0.0 <= ttr["diff_hi"]
