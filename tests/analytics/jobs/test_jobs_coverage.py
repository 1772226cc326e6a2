"""Every table the report shows states its coverage; MTTF vs size says when there are too few job sizes."""

from __future__ import annotations

import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

from analytics.jobs import build_report, run_job
from analytics.jobs.coverage import Coverage, coverage_text
from analytics.jobs.interruptions import SizeSlope, slope_text
from analytics.jobs.report import SHOWN
from tests.analytics.jobs.factories import SyntheticFleet, build_lake

Lake = tuple[Path, dict[str, Any], SyntheticFleet]


def test_coverage_text_counts_and_share() -> None:
    assert Coverage(321, 584, "incidents", "classified").text() == "321 of 584 incidents classified (55.0%)"
    assert Coverage(0, 0, "outages", "closed").text() == "0 of 0 outages closed"


def test_every_shown_table_states_its_coverage(synthetic_lake: Lake, tmp_path: Path) -> None:
    lake, _, _ = synthetic_lake
    rep = build_report(lake, tmp_path / "out", show_progress=False)
    assert set(rep.results) == {
        "early-life",
        "fabric",
        "offenders",
        "maintenance-domain",
        "interruptions",
        "incidents",
        "campaigns",
    }
    shown = [(name, t) for name, r in rep.results.items() for t in SHOWN[name] if t in r.tables]
    missing = [(name, t) for name, t in shown if coverage_text(rep.results[name].summary, t) is None]
    assert shown and not missing
    assert "coverage: not measured" not in rep.markdown.read_text()


def test_fabric_coverage_counts_samples_of_hosts_outside_the_inventory(
    synthetic_lake: Lake, tmp_path: Path
) -> None:
    lake, _, fleet = synthetic_lake
    cov = run_job("fabric", lake).summary["coverage"]["percentiles"]
    assert cov["counted"] == cov["total"] > 0  # every sampled host is inventoried in the synthetic fleet
    partial = tmp_path / "lake"
    shutil.copytree(lake, partial)
    DeltaTable(str(partial / "host_inventoried")).delete("host_id = 'h00000'")
    cov = run_job("fabric", partial).summary["coverage"]["percentiles"]
    per_host = cov["total"] // (2 * fleet.hosts_per_cluster)
    assert (cov["counted"], cov["total"]) == (cov["total"] - per_host, per_host * 2 * fleet.hosts_per_cluster)


def test_slope_text_never_prints_nan() -> None:
    assert slope_text(SizeSlope(float("nan"), float("nan"), 1)) == (
        "not enough job sizes: 1 size bucket(s) with interruptions, 2 needed for a slope"
    )
    assert slope_text(SizeSlope(-0.98, 3.0, 4)) == "MTTF ∝ N^-0.98 over 4 size buckets"


@pytest.fixture(scope="module")
def one_size_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    lake = tmp_path_factory.mktemp("one-size")
    build_lake(lake, SyntheticFleet(hosts_per_cluster=32, sample_days=2.0, job_sizes_hosts=(8,)))
    return lake


def test_one_job_size_says_not_enough_job_sizes(one_size_lake: Path, tmp_path: Path) -> None:
    result = run_job("interruptions", one_size_lake)
    assert result.summary["mttf_size_slope"] is None and result.summary["size_buckets"] == 1
    assert result.summary["mttf_vs_size"].startswith("not enough job sizes: 1 size bucket(s)")
    rep = build_report(one_size_lake, tmp_path / "out", jobs=("interruptions",), show_progress=False)
    md = rep.markdown.read_text()
    assert "not enough job sizes" in md and "N^nan" not in md and "N^" not in md


def test_domain_sizing_on_a_simulated_lake_measures_its_inputs(synthetic_lake: Lake) -> None:
    lake, _, fleet = synthetic_lake
    result = run_job("maintenance-domain", lake)
    inputs = result.summary["inputs"]
    assert inputs["repair_hours"].startswith("measured: median of") and "planner" in inputs["repair_hours"]
    assert (
        inputs["job_hosts"] == f"measured: the largest interrupted job, {max(fleet.job_sizes_hosts) * 8} GPUs"
    )
    assert result.summary["model"]["job_hosts"] == max(fleet.job_sizes_hosts)
    assert math.isfinite(result.summary["model"]["repair_hours"]) and not result.notes


def test_domain_sizing_takes_the_job_size_from_the_samples_without_interruptions(
    synthetic_lake: Lake, tmp_path: Path
) -> None:
    lake, _, fleet = synthetic_lake
    partial = tmp_path / "lake"
    shutil.copytree(lake, partial, ignore=shutil.ignore_patterns("job_interrupted"))
    result = run_job("maintenance-domain", partial)
    widest = max(fleet.job_sizes_hosts)
    assert (
        result.summary["inputs"]["job_hosts"] == f"measured: the largest job in the samples, {widest} hosts"
    )
    assert result.summary["model"]["job_hosts"] == widest
