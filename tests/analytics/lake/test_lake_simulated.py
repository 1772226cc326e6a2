"""A fresh simulated lake passes ``fleetpulse lake validate``, its resends included (issue 40: it failed four checks)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analytics.lake.reader import Lake
from fleetpulse.cli import app


@pytest.mark.slow
def test_a_fresh_simulated_lake_passes_lake_validate(tmp_path: Path) -> None:
    lake, truth = tmp_path / "lake", tmp_path / "truth"
    # 5 % resent instead of 0.1 %: a day of the small preset (~300 events) then surely holds some
    env = {**os.environ, "FLEETPULSE_SIMULATOR__DUPLICATE_FRACTION": "0.05"}
    argv = ["simulate", "--preset", "small", "--sink", "parquet", "--duration", "1d"]
    argv += ["--out", str(lake), "--truth-out", str(truth)]
    subprocess.run(
        [sys.executable, "-m", "fleetpulse", *argv], check=True, capture_output=True, timeout=600, env=env
    )
    assert json.loads((truth / "manifest.json").read_text())["delivery"]["events_duplicated"] > 0

    result = CliRunner().invoke(app, ["lake", "validate", "--lake", str(lake), "--format", "json"])
    assert result.exit_code == 0, result.output
    checks = json.loads(result.output[result.output.index("[") : result.output.rindex("]") + 1])
    reader = Lake(lake)
    assert {c["table"] for c in checks if c["date"] == "*"} == set(reader.tables())
    assert all(c["result"] == "pass" for c in checks), [c for c in checks if c["result"] != "pass"]
