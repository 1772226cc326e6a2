"""The README's quickstart is executed, so it cannot go stale."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import KafkaCluster

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def quickstart_commands() -> list[str]:
    section = README.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block, "the quickstart has a bash block"
    return [
        line.split("#", 1)[0].strip() for line in block.group(1).splitlines() if line.split("#", 1)[0].strip()
    ]


def make_dry_run(target: str) -> str:
    out = subprocess.run(
        ["make", "-n", "-W", "pyproject.toml", target], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_quickstart_is_exactly_two_commands() -> None:
    assert quickstart_commands() == ["make demo", "make test"]


def test_make_demo_runs_the_demo_and_make_test_runs_pytest() -> None:
    assert "fleetpulse demo" in make_dry_run("demo")
    test = make_dry_run("test")
    assert "pytest" in test and "ruff check" in test


def test_ci_calls_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci


@pytest.mark.integration
@pytest.mark.slow
def test_the_demo_runs_end_to_end_and_prints_its_summary(kafka: KafkaCluster, tmp_path: Path) -> None:
    """`make demo` on the test broker, scaled down in size and time (same code path)."""
    env = {**os.environ, "KAFKA_BOOTSTRAP_SERVERS": kafka.bootstrap_servers}
    env.pop("FLEETPULSE_CONFIG", None)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "fleetpulse",
            "demo",
            "--preset",
            "small",
            "--history-days",
            "10",
            "--live-seconds",
            "8",
            "--speed",
            "20",
            "--out",
            str(tmp_path),
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "detection vs ground truth" in proc.stdout
    (run_dir,) = list(tmp_path.glob("demo-*"))
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["events"] and all(n > 0 for n in summary["events"].values())
    assert Path(summary["report"]).is_file()
    assert summary["alerts"]["produced"] == summary["alerts"].get("received")
    segments = [
        json.loads((run_dir / d / "manifest.json").read_text())["counts"] for d in ("truth", "truth-live")
    ]
    assert summary["truth_counts"]["HostSampled"] == sum(c.get("HostSampled", 0) for c in segments)
    assert segments[1].get("HostSampled", 0) > 0  # the live segment's samples are counted too
