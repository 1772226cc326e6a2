"""ground.launch: a child rebuilds exactly the parent's settings, secrets included, and nothing inherited."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pydantic import SecretStr

from ground.launch import child_env, fleetpulse_argv, launch, settings_env
from ground.settings import Settings


def _settings() -> Settings:
    base = Settings.load()
    return base.model_copy(
        update={
            "kafka": base.kafka.model_copy(
                update={"bootstrap_servers": "broker:9093", "sasl_password": SecretStr("kp")}
            ),
            "webhooks": base.webhooks.model_copy(
                update={"secret": SecretStr("s" * 40), "urls": ["http://x/a"]}
            ),
            "topics": base.topics.model_copy(update={"prefix": "run7."}),
        }
    )


def test_settings_env_names_every_section_and_carries_secrets() -> None:
    env = settings_env(_settings())
    assert set(env) == {f"FLEETPULSE_{name.upper()}" for name in Settings.model_fields}
    assert json.loads(env["FLEETPULSE_WEBHOOKS"])["secret"] == "s" * 40
    assert json.loads(env["FLEETPULSE_KAFKA"])["sasl_password"] == "kp"


def test_a_child_rebuilds_an_equal_settings_object(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FLEETPULSE_TOPICS__PREFIX", "inherited.")  # must not leak into the child
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "elsewhere:1")
    parent = _settings()
    script = (
        "from ground.settings import Settings; s = Settings.load(); "
        "print(s.model_dump_json(exclude={'kafka': {'sasl_password'}, 'webhooks': {'secret'}})); "
        "print(s.webhooks.secret.get_secret_value(), s.kafka.sasl_password.get_secret_value())"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=child_env(parent),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    dumped, secrets = done.stdout.splitlines()
    child = Settings.model_validate_json(dumped)
    assert child.topics.prefix == "run7."
    assert child.bootstrap_servers == "broker:9093"
    assert child.detect == parent.detect and child.lake == parent.lake
    assert secrets.split() == ["s" * 40, "kp"]


def test_launch_writes_the_childs_output_to_its_log(tmp_path: Path) -> None:
    log_path = tmp_path / "part.log"
    proc, log = launch([sys.executable, "-c", "print('hello from the part')"], {"PATH": "/usr/bin"}, log_path)
    assert proc.wait(30) == 0
    assert log is not None
    log.close()
    assert log_path.read_text().strip() == "hello from the part"
    assert fleetpulse_argv("detect")[1:] == ["-m", "fleetpulse", "detect"]


def _running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's zombie waits for whoever adopted it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


PARENT = """
import secrets, sys, time
from pathlib import Path
from ground.launch import child_env, fleetpulse_argv, launch
from ground.settings import Settings
out = Path(sys.argv[1])
proc, _log = launch(fleetpulse_argv("receiver", "--port", "0", "--out", str(out / "alerts.jsonl")),
                    child_env(Settings.load(), {"FLEETPULSE_WEBHOOKS__SECRET": secrets.token_urlsafe(32)}), out / "child.log")
print(proc.pid, flush=True)
time.sleep(600)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_child_ends_when_its_parent_is_killed_before_it_stopped_it(tmp_path: Path) -> None:
    """An interrupted start-up (the parent gone before its clean-up ran) leaves no orphaned part."""
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    time.sleep(8)
    assert _running(child), (tmp_path / "child.log").read_text(errors="replace")[-2000:]
    parent.kill()
    parent.wait(10)
    deadline = time.monotonic() + 30
    while _running(child) and time.monotonic() < deadline:
        time.sleep(0.2)
    try:
        assert not _running(child), (tmp_path / "child.log").read_text(errors="replace")[-2000:]
    finally:
        if _running(child):
            os.kill(child, signal.SIGKILL)
