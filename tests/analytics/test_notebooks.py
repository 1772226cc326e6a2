"""The notebooks run top to bottom (nbclient) on a small synthetic lake passed through the environment."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.analytics.jobs.factories import SyntheticFleet, build_lake

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


@pytest.fixture(scope="module")
def small_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    lake = tmp_path_factory.mktemp("nb-lake")
    build_lake(lake, SyntheticFleet(hosts_per_cluster=60, sample_days=4.0))
    return lake


@pytest.fixture(scope="module")
def simulated_week(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seven days of the simulator's small preset: too few failures for the power-law fit."""
    lake = tmp_path_factory.mktemp("nb-week") / "lake"
    argv = ["simulate", "--preset", "small", "--sink", "parquet", "--duration", "7d", "--out", str(lake)]
    subprocess.run([sys.executable, "-m", "fleetpulse", *argv], check=True, capture_output=True, timeout=600)
    return lake


@pytest.mark.slow
@pytest.mark.parametrize("name", ["fleet_health.ipynb", "fabric_ab.ipynb"])
def test_notebook_runs_top_to_bottom(name: str, small_lake: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_notebook(name, small_lake, monkeypatch)


@pytest.mark.slow
def test_fleet_health_runs_on_a_simulated_week(simulated_week: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_notebook("fleet_health.ipynb", simulated_week, monkeypatch)


def run_notebook(name: str, lake: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLEETPULSE_NOTEBOOK_LAKE", str(lake))
    monkeypatch.delenv("FLEETPULSE_NOTEBOOK_TRUTH", raising=False)
    book = nbformat.read(NOTEBOOKS / name, as_version=4)
    NotebookClient(
        book, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
    ).execute()
    errors = [
        o
        for c in book.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.output_type == "error"
    ]
    assert not errors
    images = [o for c in book.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert images  # the plots were drawn
