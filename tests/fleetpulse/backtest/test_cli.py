"""``fleetpulse backtest`` end to end: its files, byte for byte the same on a second run, and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from fleetpulse.backtest.errors import BacktestError
from fleetpulse.cli import app
from tests.fleetpulse.backtest import lake as hand


def backtest(*args: str) -> None:
    result = CliRunner().invoke(app, ["backtest", *args])
    assert result.exit_code == 0, result.output


def files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_a_sweep_writes_the_same_bytes_twice(tmp_path: Path) -> None:
    lake = hand.build(tmp_path / "lake")
    sweep = ["--lake", str(lake), "--set", "slow_host.min_slowdown=0.01,0.02,0.04"]
    backtest(*sweep, "--out", str(tmp_path / "a"))
    backtest(*sweep, "--out", str(tmp_path / "b"))
    first = files(tmp_path / "a")
    assert first == files(tmp_path / "b")
    assert {"report.html", "report.md", "summary.json", "sweep.csv", "sweep.png", "v0/findings.csv"} <= set(
        first
    )
    assert pl.read_csv(tmp_path / "a" / "sweep.csv")["findings"].to_list() == [3, 2, 1]
    changed = pl.read_csv(tmp_path / "a" / "v0" / "findings.csv").filter(pl.col("status") != "both")
    assert changed.select("status", "host_id", "rule").rows() == [("backtest only", "h04", "slow_host")]
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert [v["findings"]["live only"] for v in summary["variants"]] == [0, 0, 1]
    report = (tmp_path / "a" / "report.md").read_text()
    assert "## Sweep" in report and "![sweep](sweep.png)" in report
    assert 'src="data:image/png;base64,' in (tmp_path / "a" / "report.html").read_text()


def test_the_period_options_bound_the_replay(tmp_path: Path) -> None:
    lake = hand.build(tmp_path / "lake")
    backtest(
        "--lake", str(lake), "--out", str(tmp_path / "o"), "--from", "2025-01-01T00:00", "--to", "2025-01-03"
    )
    [variant] = json.loads((tmp_path / "o" / "summary.json").read_text())["variants"]
    assert variant["replayed"] == {"EccErrorObserved": 2, "HostSampled": hand.SAMPLES * len(hand.HOSTS)}
    assert variant["findings"] == {
        "both": 1,
        "backtest only": 0,
        "live only": 0,
    }  # h01's second UCE is on day 4


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("slow_host.min_slowdown", "want KEY=V1"),
        ("rules.no_such_rule.count=2", "no entry 'no_such_rule'"),
        ("slow_host.k=9", "k (9) must not exceed n"),
    ],
)
def test_a_bad_set_names_what_to_fix(tmp_path: Path, option: str, message: str) -> None:
    result = CliRunner().invoke(app, ["backtest", "--lake", str(tmp_path), "--set", option])
    assert isinstance(result.exception, BacktestError)
    assert message in str(result.exception)


def test_scores_against_the_simulators_truth(tmp_path: Path) -> None:
    sim = [
        "simulate",
        "--preset",
        "small",
        "--days",
        "3",
        "--seed",
        "11",
        "--sink",
        "parquet",
        "--no-progress",
    ]
    result = CliRunner().invoke(
        app, [*sim, "--out", str(tmp_path / "lake"), "--truth-out", str(tmp_path / "truth")]
    )
    assert result.exit_code == 0, result.output
    backtest(
        "--lake", str(tmp_path / "lake"), "--truth", str(tmp_path / "truth"), "--out", str(tmp_path / "o")
    )
    [variant] = json.loads((tmp_path / "o" / "summary.json").read_text())["variants"]
    detectors = variant["score"]["detectors"]
    assert set(detectors) >= {"repeat_offender", "slow_host"}
    found = sum(variant["findings"].values())
    assert found > 0 and sum(d["predicted"] for d in detectors.values()) > 0
    assert "Against the simulator's truth" in (tmp_path / "o" / "report.md").read_text()
