"""Commands that read a lake, given a missing or wrong path: one line on stderr and exit 2, never an empty result."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fleetpulse.cli import main

COMMANDS = [
    ["lake", "status"],
    ["lake", "quarantine"],
    ["report", "--out", "{tmp}/report"],
    ["analyze", "offenders"],
    ["backtest", "--out", "{tmp}/backtest"],
]


@pytest.mark.parametrize("wrong", ["missing", "not-a-lake"])
@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_a_wrong_lake_path_is_one_line_and_exit_2(
    argv: list[str],
    wrong: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    lake = tmp_path / "nothing-here"
    if wrong == "not-a-lake":
        lake.mkdir()
        (lake / "notes.txt").write_text("a folder, but no Delta tables")
    args = [a.format(tmp=tmp_path) for a in argv]
    monkeypatch.setattr(sys, "argv", ["fleetpulse", *args, "--lake", str(lake)])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "nothing-here" in err[0], err
    assert not (tmp_path / "report").exists() and not (tmp_path / "backtest").exists()
