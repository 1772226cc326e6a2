"""A seeded simulated lake (the simulator's Parquet sink), for tests that replay a realistic history."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from fleetpulse.cli import app


def simulated_lake(folder: Path, seed: int = 21, days: int = 4, preset: str = "small") -> Path:
    sim = ["simulate", "--preset", preset, "--days", str(days), "--seed", str(seed)]
    sim += ["--sink", "parquet", "--no-progress"]
    result = CliRunner().invoke(app, [*sim, "--out", str(folder)])
    assert result.exit_code == 0, result.output
    return folder
