"""Truth recovery: the jobs, run on a simulated lake, find what the simulator was configured with.

Runs ``fleetpulse simulate`` (fast-forward, Parquet sink) on a fleet with a raised failure rate so
the estimates are tight enough to test, then scores the jobs against the truth directory.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from analytics.jobs import run_job
from analytics.jobs.inferred_faults import EARLY_LIFE_KINDS
from fleetpulse.cli import app

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("producers.runner") is None, reason="simulator not built yet"
    ),
]

FLEET = """
name = "truth-recovery"
hosts_per_rack = 2
racks_per_domain = 4

[[clusters]]
name = "t-roce"
fabric = "roce"
hosts = 128

[[clusters]]
name = "t-ib"
fabric = "infiniband"
hosts = 128

[install]
history_days = 360
cohorts_per_cluster = 8
arriving_fraction = 0.25

[failures]
interruptions_per_gpu_day = 0.03
guard_days = 0  # at 60x Llama 3's rate the repeat guard would drop hardware faults and skew the mix

# One pace for every job and no idle gaps: the fabric job compares fabrics across all hosts, which
# only measures the fabric when no job runs at a pace of its own.
[jobs]
pace = [1.0, 1.0]
bw_pace = [1.0, 1.0]
idle_hours = 0
"""


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("sim")
    (root / "fleet.toml").write_text(FLEET)
    lake, truth = root / "lake", root / "truth"
    args = [
        "simulate",
        "--fleet-config",
        str(root / "fleet.toml"),
        "--mode",
        "fast-forward",
        "--days",
        "120",
        "--seed",
        "7",
        "--interval",
        "21600",
        "--sink",
        "parquet",
        "--out",
        str(lake),
        "--truth-out",
        str(truth),
        "--no-progress",
    ]
    # exact delivery: these tests check the estimates; duplicated deliveries are another matter
    exact = {
        f"FLEETPULSE_SIMULATOR__{k}": "0" for k in ("LATE_FRACTION", "DROPOUT_FRACTION", "DUPLICATE_FRACTION")
    }
    res = CliRunner().invoke(app, args, env=exact)
    assert res.exit_code == 0, res.output
    return lake, truth, json.loads((truth / "manifest.json").read_text())


def _find(doc: Any, key: str) -> Any:
    from analytics.jobs.truth import find_key

    return find_key(doc, key)


def test_weibull_shape_within_ten_percent(simulated: tuple[Path, Path, dict[str, Any]]) -> None:
    lake, truth, manifest = simulated
    shape = _find(manifest, "weibull_shape")
    fit = run_job("early-life", lake, truth).summary["fits"]["early_life_modes"]
    assert abs(fit["shape"] - shape) <= 0.10 * shape, fit
    assert fit["shape_lo"] <= shape <= fit["shape_hi"]


def test_fabric_difference_sign_and_size(simulated: tuple[Path, Path, dict[str, Any]]) -> None:
    lake, truth, manifest = simulated
    fabrics = _find(manifest, "fabrics")
    comps = run_job("fabric", lake, truth, n_boot=1000).summary["comparisons"]
    for metric in ("step_time_ms", "bus_bw_gbps"):
        c = comps[metric]
        want = fabrics[c["group_b"]][metric] - fabrics[c["group_a"]][metric]
        assert np.sign(c["diff"]) == np.sign(want), c
        assert c["diff_lo"] <= want <= c["diff_hi"], c


def test_interruption_mix_matches_the_configuration(simulated: tuple[Path, Path, dict[str, Any]]) -> None:
    lake, truth, manifest = simulated
    mix = _find(manifest, "cause_mix")
    table = run_job("interruptions", lake, truth).tables["root_causes"]
    # Lemon repeats come on top of the configured mix (one interruption each): take them out.
    faults = pl.read_parquet(truth / "faults.parquet")
    lemons = dict(
        faults.filter((pl.col("phase") == "lemon") & (pl.col("kind") != "link_flap"))
        .group_by("cause")
        .len()
        .iter_rows()
    )
    counts = {c: n - lemons.get(c, 0) for c, n in zip(table["cause"], table["count"], strict=True)}
    n = sum(counts[c] for c in mix)
    assert n > 5000
    total = sum(mix.values())
    for cause, weight in mix.items():
        p = weight / total
        sd = np.sqrt(p * (1 - p) / n)
        assert abs(counts[cause] / n - p) <= 4 * sd, (cause, counts[cause] / n, p)  # 4 σ over 13 causes


def test_slow_hosts_found_without_false_alarms(simulated: tuple[Path, Path, dict[str, Any]]) -> None:
    lake, truth, _ = simulated
    hosts = pl.read_parquet(truth / "hosts.parquet")
    slow = set(hosts.filter(pl.col("slow_cause").is_not_null())["host_id"].to_list())
    # intermittent hosts (2-6 % slower in some 30-minute episodes) average out in 6 h samples: only
    # the persistently slow ones are expected to be found; none of the flagged may be healthy
    steady = set(
        hosts.filter(pl.col("slow_cause").is_not_null() & ~pl.col("slow_intermittent"))["host_id"].to_list()
    )
    flagged = run_job("fabric", lake, truth, n_boot=200).tables["slow_hosts"].filter(pl.col("is_slow"))
    flagged_ids = set(flagged["host_id"].to_list())
    assert steady and len(flagged_ids & steady) >= 0.95 * len(steady)
    assert len(flagged_ids - slow) <= 0.05 * max(len(flagged_ids), 1)


def test_fault_table_matches_the_truth(simulated: tuple[Path, Path, dict[str, Any]]) -> None:
    lake, truth, _ = simulated
    from analytics.jobs import load_faults

    seen = load_faults(str(lake)).group_by("kind").len().collect()
    want = pl.read_parquet(truth / "faults.parquet").group_by("kind").len()
    got = dict(seen.iter_rows())
    for kind, n in want.iter_rows():
        if (
            kind != "link_flap"
        ):  # the truth has one fault per lemon burst of flaps, the lake one event per flap
            assert got.get(kind, 0) == n, (kind, got.get(kind), n)
    assert set(EARLY_LIFE_KINDS) <= set(got)
