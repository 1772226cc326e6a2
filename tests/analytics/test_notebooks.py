"""The notebooks run top to bottom (nbclient) on a small synthetic lake passed through the environment."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.analytics.jobs.campaign_lake import halted_and_rolled_back, write_twin_lake
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
    book = execute(nbformat.read(NOTEBOOKS / name, as_version=4), lake, monkeypatch)
    images = [o for c in book.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert images  # the plots were drawn


def execute(
    book: nbformat.NotebookNode, lake: Path, monkeypatch: pytest.MonkeyPatch
) -> nbformat.NotebookNode:
    """Run ``book`` on ``lake`` (no truth dir); no cell may end in an error."""
    monkeypatch.setenv("FLEETPULSE_NOTEBOOK_LAKE", str(lake))
    monkeypatch.delenv("FLEETPULSE_NOTEBOOK_TRUTH", raising=False)
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
    return book


@pytest.mark.slow
def test_fleet_health_draws_each_campaign_and_its_halt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The notebook's campaign cells (after its parameters) on a lake with a halted and rolled-back campaign."""
    twin, cid, people = halted_and_rolled_back()
    write_twin_lake(tmp_path, twin, people)
    book = nbformat.read(NOTEBOOKS / "fleet_health.ipynb", as_version=4)
    book.cells = [book.cells[1], *(c for c in book.cells if "campaigns" in c.metadata.get("tags", []))]
    book = execute(book, tmp_path, monkeypatch)
    outputs = [o for c in book.cells for o in c.get("outputs", [])]
    assert sum("image/png" in o.get("data", {}) for o in outputs) == 1  # the campaign, its rollback on it
    text = " ".join(str(o.get("text", "")) + str(o.get("data", {}).get("text/html", "")) for o in outputs)
    assert (
        "2 campaign(s) (1 aborted, 1 completed), 1 halt(s)" in text and cid in text and "rate ratio" in text
    )
