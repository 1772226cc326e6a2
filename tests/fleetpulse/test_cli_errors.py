"""``fleetpulse`` errors print as one line even when a path or host id holds rich markup (``[/]``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_markup_in_an_error_message_is_printed_literally(tmp_path: Path) -> None:
    missing = tmp_path / "odd[/]name[bold].toml"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETPULSE_")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])  # this tree's code, whatever is installed
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "from fleetpulse.cli import main; main()",
            "--config",
            str(missing),
            "topics",
            "list",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert run.returncode == 2, run.stderr
    assert run.stderr.strip().splitlines() == [f"error: config file {missing} does not exist"]
