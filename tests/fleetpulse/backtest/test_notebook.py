"""notebooks/policy_backtest.ipynb runs top to bottom (nbclient) on the hand-built lake, and shows the sweep."""

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
    book = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        book, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    ).execute()
    outputs = [o for c in book.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    assert len([o for o in outputs if "image/png" in o.get("data", {})]) == 2  # the sweep and the capacity
    text = "\n".join(o.get("data", {}).get("text/plain", "") for o in outputs)
    assert "slow_host.min_slowdown=0.01" in text and "backtest only" in text and "live only" in text
