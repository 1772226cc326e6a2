"""The README's "Bring your own history" example runs and prints what the README shows."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fleetpulse.cli import app

ROOT = Path(__file__).resolve().parents[3]
SECTION = (ROOT / "README.md").read_text().split("## Bring your own history", 1)[1].split("\n## ", 1)[0]


def block(lang: str, index: int = 0) -> str:
    return re.findall(rf"```{lang}\n(.*?)```", SECTION, re.S)[index]


def test_the_worked_example_prints_what_the_readme_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "history.csv").write_text(block("csv"))
    (tmp_path / "my-mapping.toml").write_text(block("toml"))
    command = shlex.split(block("bash", 0).strip())
    assert command[:2] == ["fleetpulse", "import"] and "--dry-run" in command
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, command[1:])
    assert result.exit_code == 0, result.output
    assert result.output == block("text")
