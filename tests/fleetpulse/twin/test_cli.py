"""``fleetpulse twin``: a grid of policy variants over seeds, one table row each; a bad option is one line."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from fleetpulse.cli import app
from fleetpulse.twin.cli import twin
from ground.errors import FleetpulseError


def test_every_variant_runs_over_every_seed(tmp_path: Path) -> None:
    out = tmp_path / "runs.json"
    result = CliRunner().invoke(
        app,
        ["twin", "--days", "5", "--seeds", "2", "--set", "planner.retire_after=0,2", "--out", str(out)],
        env={"COLUMNS": "250"},
    )
    assert result.exit_code == 0, result.output
    assert "planner.retire_after=0" in result.output and "planner.retire_after=2" in result.output
    assert "GPU-hours lost by cause" in result.output
    runs = json.loads(out.read_text())
    assert [r["variant"] for r in runs] == [{"planner.retire_after": 0}, {"planner.retire_after": 2}]
    assert all(len(r["runs"]) == 2 for r in runs)
    assert runs[0]["runs"][0]["ettr_mean"] is not None


def test_a_bad_twin_setting_is_a_fleetpulse_error() -> None:
    result = CliRunner().invoke(app, ["twin", "--days", "1", "--twin-set", "spare_pct=500"])
    assert isinstance(result.exception, FleetpulseError)
    assert "spare_pct" in str(result.exception)
    assert twin.__doc__ is not None


def test_format_json_and_csv_give_one_row_of_numbers_per_variant() -> None:
    args = ["twin", "--days", "2", "--seeds", "2", "--set", "planner.retire_after=0,2"]
    as_json = CliRunner().invoke(app, [*args, "--format", "json"])
    assert as_json.exit_code == 0, as_json.output
    rows = json.loads(as_json.stdout)
    assert [r["planner.retire_after"] for r in rows] == ["0", "2"]
    assert all(isinstance(r["goodput"], float) and 0 < r["goodput"] <= 1 for r in rows)
    assert all(isinstance(r["goodput ±"], float) for r in rows)  # two seeds: an interval
    assert "lost failures GPU-h" in rows[0]
    as_csv = CliRunner().invoke(app, [*args, "--format", "csv"])
    assert as_csv.exit_code == 0, as_csv.output
    header, *lines = as_csv.stdout.splitlines()
    assert header.startswith("planner.retire_after,ettr_mean,ettr_mean ±,goodput") and len(lines) == 2
