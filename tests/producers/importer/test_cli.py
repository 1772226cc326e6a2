"""``fleetpulse import --dry-run``: the coverage an operator reads before sending anything."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from fleetpulse.cli import app as cli

TRACE = """node_id,time,event,fault_type
1,0.5,start,GPU/DBE/over threshold
1,1,end,GPU/DBE/over threshold
2,1,start,Network/link down/port 1
2,2,end,Network/link down/port 1
3,3,start,GPU/lost/-
4,x,start,GPU/lost/-
"""
MAPPING = """
[columns]
host = "node_id"
time = "time"
event = "event"
source_class = "fault_type"
[causes]
"GPU" = "faulty_gpu"
"""


def test_dry_run_prints_coverage_unmapped_classes_and_bad_rows(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text(TRACE)
    (tmp_path / "m.toml").write_text(MAPPING)
    args = ["import", str(tmp_path / "t.csv"), "--mapping", str(tmp_path / "m.toml"), "--start", "2024-01-01"]
    result = CliRunner().invoke(cli, [*args, "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "3 incidents on 3 hosts, 1 bad row" in result.output
    assert "coverage: 2 of 3 incidents classified (66.7%)" in result.output
    assert "'Network/link down/port 1': 1" in result.output
    assert "bad row 7: unparseable time 'x'" in result.output
    assert "dry run: nothing sent" in result.output


def test_relative_times_without_start_are_bad_rows_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text(TRACE)
    (tmp_path / "m.toml").write_text(MAPPING)
    result = CliRunner().invoke(
        cli, ["import", str(tmp_path / "t.csv"), "--mapping", str(tmp_path / "m.toml"), "--dry-run"]
    )
    assert result.exit_code == 0, result.output
    assert "0 incidents" in result.output and "needs --start" in result.output


def test_a_wrong_file_is_refused_with_what_to_fix(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("server,when\nh,1\n")
    result = CliRunner().invoke(cli, ["import", str(tmp_path / "t.csv"), "--dry-run"])
    assert result.exit_code != 0
    assert "wrong columns: missing host, start, class" in str(result.exception)
