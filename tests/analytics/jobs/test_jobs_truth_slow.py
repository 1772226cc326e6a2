"""The report's slow-host check on a multi-pace fleet: the batch view is precise, and the check can say no.

Jobs run at paces from ×0.6 to ×1.8 on one cluster, so a comparison with the cluster's median flags
every host of a slow-paced job (precision 0.07 on the demo before the batch view used the detector's
job-relative peers); the check must give "yes" to the batch view and "no" to such a flag set.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from analytics.jobs import run_job
from analytics.jobs.result import JobResult
from analytics.jobs.slow_truth import Materiality, judge_slow_hosts, material_hosts
from analytics.jobs.truth import slow_host_check, truth_checks
from fleetpulse.cli import app

pytestmark = pytest.mark.slow

FLEET = """
name = "multi-pace"
hosts_per_rack = 2
racks_per_domain = 4

[[clusters]]
name = "m-roce"
fabric = "roce"
hosts = 64

[[clusters]]
name = "m-ib"
fabric = "infiniband"
hosts = 64

[slow]
fraction = 0.12

[jobs]
sizes_hosts = [16, 16, 8, 8, 4, 4, 4, 4]
pace = [0.6, 1.8]
"""


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("multi-pace")
    (root / "fleet.toml").write_text(FLEET)
    lake, truth = root / "lake", root / "truth"
    args = [
        "simulate",
        "--fleet-config",
        str(root / "fleet.toml"),
        "--mode",
        "fast-forward",
        "--days",
        "2",
        "--seed",
        "11",
        "--interval",
        "60",
        "--sink",
        "parquet",
        "--out",
        str(lake),
        "--truth-out",
        str(truth),
        "--no-progress",
    ]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    return lake, truth


def test_the_batch_view_passes_the_slow_host_check(simulated: tuple[Path, Path]) -> None:
    lake, truth = simulated
    checks = truth_checks({"fabric": run_job("fabric", lake, truth, n_boot=50)}, truth)
    row = checks.filter(pl.col("check").str.starts_with("slow hosts")).to_dicts()[0]
    precision = float(row["detail"].split("precision=")[1].split()[0])
    assert precision >= 0.9, row
    assert row["verdict"] == "yes" and row["ok"] is True, row
    assert "materiality" in row["detail"]


def test_the_check_says_no_to_a_cluster_median_view(simulated: tuple[Path, Path]) -> None:
    """Flag the hosts of every job slower-paced than its cluster's median job, plus the truth's: recall is
    perfect, precision is not, and the verdict is no."""
    lake, truth = simulated
    hosts = pl.read_parquet(truth / "hosts.parquet")
    manifest = json.loads((truth / "manifest.json").read_text())
    jobs = pl.read_parquet(truth / "jobs.parquet")
    slow_paced = jobs.filter(pl.col("pace") > pl.col("pace").median().over("cluster"))["slot"].unique()
    judged = judge_slow_hosts(
        hosts,
        manifest["start_ts"],
        manifest["end_ts"],
        jobs.to_dicts(),
        pl.read_parquet(truth / "slow_episodes.parquet").to_dicts(),
    )
    flagged = hosts.filter(
        pl.col("job_id").is_in(slow_paced.implode()) | pl.col("host_id").is_in(list(material_hosts(judged)))
    )
    result = JobResult(
        "fabric", {"slow_hosts": flagged.select("host_id", pl.lit(True).alias("is_slow"))}, {}, []
    )
    row = slow_host_check(hosts, result, truth, manifest, Materiality())[0]
    assert row["verdict"] == "no" and row["ok"] is False, row
    assert "recall=1.00" in row["detail"]
