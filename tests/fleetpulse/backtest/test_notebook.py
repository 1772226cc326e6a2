"""notebooks/policy_backtest.ipynb runs top to bottom (nbclient) on the hand-built lake, and shows the sweep
and the closed-loop twin sweep (a small fleet, short and few seeds, to stay quick)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.fleetpulse.backtest import lake as hand

NOTEBOOK = Path(__file__).resolve().parents[3] / "notebooks" / "policy_backtest.ipynb"


@pytest.mark.slow
def test_notebook_runs_top_to_bottom(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLEETPULSE_NOTEBOOK_LAKE", str(hand.build(tmp_path / "lake")))
    monkeypatch.delenv("FLEETPULSE_NOTEBOOK_TRUTH", raising=False)
    monkeypatch.setenv("FLEETPULSE_NOTEBOOK_SWEEP", "slow_host.min_slowdown=0.01,0.04")
    monkeypatch.setenv("FLEETPULSE_NOTEBOOK_TWIN_PRESET", "small")
    monkeypatch.setenv("FLEETPULSE_NOTEBOOK_TWIN_DAYS", "10")
    monkeypatch.setenv("FLEETPULSE_NOTEBOOK_TWIN_SEEDS", "2")
    monkeypatch.setenv("FLEETPULSE_NOTEBOOK_TWIN_SWEEP", "rules.dram_uce_repeat_gpu.count=1,2")
    book = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        book, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    ).execute()
    outputs = [o for c in book.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) == 3  # the backtest sweep, the capacity, the twin's goodput and pages
    text = "\n".join(o.get("data", {}).get("text/plain", "") for o in outputs)
    assert "slow_host.min_slowdown=0.01" in text and "backtest only" in text and "live only" in text
    # the twin's table: one row per variant (its value, goodput, pages, precision, GPU-hours lost)
    assert "shape: (2, 9)" in text and "goodput ±" in text and "interruptions" in text
