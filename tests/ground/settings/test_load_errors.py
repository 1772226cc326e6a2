"""Settings that cannot be read fail as one line naming the file or the variable, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ground.errors import ConfigError
from ground.settings import Settings


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for key in list(os.environ):
        if key.startswith("FLEETPULSE_") or key == "KAFKA_BOOTSTRAP_SERVERS":
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_malformed_toml_file_names_the_file_and_the_place(clean_env: Path) -> None:
    (clean_env / "fleetpulse.toml").write_text("[webhooks\nurls = 3\n")
    with pytest.raises(ConfigError, match=r"fleetpulse.toml is not valid TOML: .*line 1"):
        Settings.load()


@pytest.mark.parametrize(
    ("key", "value"),
    [("FLEETPULSE_WEBHOOKS__URLS", "http://x.example/hook"), ("FLEETPULSE_WEBHOOKS__URLS", "[unclosed")],
)
def test_a_list_value_that_is_not_json_names_the_variable(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch, key: str, value: str
) -> None:
    monkeypatch.setenv(key, value)
    monkeypatch.setenv("FLEETPULSE_WEBHOOKS__RECEIVER_NAME", "not json and need not be")
    with pytest.raises(ConfigError) as info:
        Settings.load()
    message = str(info.value)
    assert key in message and "RECEIVER_NAME" not in message and "\n" not in message


def test_the_cli_prints_one_line_and_exits_2(clean_env: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETPULSE_")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[3])  # this tree's code, whatever is installed
    env["FLEETPULSE_WEBHOOKS__URLS"] = "http://x.example/hook"
    run = subprocess.run(
        [sys.executable, "-c", "from fleetpulse.cli import main; main()", "topics", "list"],
        capture_output=True,
        text=True,
        env=env,
        cwd=clean_env,
        timeout=120,
    )
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        'error: invalid configuration: FLEETPULSE_WEBHOOKS__URLS must be JSON (a list such as \'["a", "b"]\' or an '
        "object)"
    ]
