"""ground.launch: a child rebuilds exactly the parent's settings, secrets included, and nothing inherited."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import SecretStr

from ground.launch import child_env, fleetpulse_argv, launch, settings_env
from ground.settings import Settings


def _settings() -> Settings:
    base = Settings.load()
    return base.model_copy(update={
        "kafka": base.kafka.model_copy(update={"bootstrap_servers": "broker:9093", "sasl_password": SecretStr("kp")}),
        "webhooks": base.webhooks.model_copy(update={"secret": SecretStr("s" * 40), "urls": ["http://x/a"]}),
        "topics": base.topics.model_copy(update={"prefix": "run7."}),
    })  # fmt: skip


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
        [sys.executable, "-c", script], env=child_env(parent), capture_output=True, text=True, timeout=60,
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
