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
from analytics.jobs.faults import EARLY_LIFE_KINDS
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
"""


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("sim")
    (root / "fleet.toml").write_text(FLEET)
    lake, truth = root / "lake", root / "truth"
    args = ["simulate", "--fleet-config", str(root / "fleet.toml"), "--mode", "fast-forward", "--days", "120",
            "--seed", "7", "--interval", "21600", "--sink", "parquet", "--out", str(lake), "--truth-out", str(truth),
            "--no-progress"]  # fmt: skip
    res = CliRunner().invoke(app, args)
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
    n = int(table["count"].sum())
    total = sum(mix.values())
    for row in table.filter(pl.col("cause").is_in(list(mix))).iter_rows(named=True):
        p = mix[row["cause"]] / total
        sd = np.sqrt(p * (1 - p) / n)
        assert abs(row["count"] / n - p) <= 4 * sd + 1e-9, (row, p)  # 4 σ: 13 causes, no false alarms


def test_fault_table_matches_the_truth(simulated: tuple[Path, Path, dict[str, Any]]) -> None:
    lake, truth, _ = simulated
    from analytics.jobs import load_faults

    seen = load_faults(str(lake)).group_by("kind").len().collect()
    want = pl.read_parquet(truth / "faults.parquet").group_by("kind").len()
    got = dict(seen.iter_rows())
    for kind, n in want.iter_rows():
        if kind in EARLY_LIFE_KINDS or kind in ("dram_uce", "sram_uce", "gsp_error", "nvlink", "pmu_halt"):
            assert got.get(kind, 0) == n, (kind, got.get(kind), n)
