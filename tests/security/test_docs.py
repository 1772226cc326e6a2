"""The configuration examples in docs/SECURITY.md load into the settings they describe."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from ground.errors import ConfigError
from ground.settings import Settings
from tests.security.tls import make_pki

DOC = Path(__file__).resolve().parents[2] / "docs" / "SECURITY.md"
DOC_CA = "/etc/fleetpulse/kafka-ca.pem"


def block(lang: str) -> str:
    [code] = re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(), re.S)
    return code


def test_environment_example(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    ca = make_pki(tmp_path).ca_file
    for line in block("sh").splitlines():
        name, _, value = line.removeprefix("export ").partition("=")
        monkeypatch.setenv(name, shlex.split(value)[0].replace(DOC_CA, str(ca)))
    settings = Settings.load()
    kafka = settings.kafka
    assert settings.bootstrap_servers == "kafka-1.example:9094,kafka-2.example:9094"
    assert (kafka.security_protocol, kafka.sasl_mechanism, kafka.sasl_username) == (
        "SASL_SSL",
        "SCRAM-SHA-256",
        "fleetpulse",
    )
    assert (
        kafka.sasl_password is not None and kafka.sasl_password.get_secret_value() == "from your secret store"
    )
    assert settings.webhooks.secret is not None
    assert kafka.kafka_python(settings.bootstrap_servers)["ssl_cafile"] == str(ca)


def test_toml_example_with_the_password_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ca = make_pki(tmp_path).ca_file
    config = tmp_path / "fleetpulse.toml"
    config.write_text(block("toml").replace(DOC_CA, str(ca)))
    with pytest.raises(ConfigError, match="needs sasl_username and sasl_password"):
        Settings.load(config)  # the file alone is incomplete, as the doc says
    monkeypatch.setenv("FLEETPULSE_KAFKA__SASL_PASSWORD", "pw")
    settings = Settings.load(config)
    assert settings.kafka.security_protocol == "SASL_SSL" and settings.kafka.ssl_cafile == str(ca)
    assert settings.webhooks.urls == ["https://ops.example/hooks/fleet"]


def test_documented_start_up_error_is_the_real_one(monkeypatch: pytest.MonkeyPatch) -> None:
    documented = re.search(r"`(kafka: Value error, .*?)`", DOC.read_text(), re.S)
    assert documented is not None
    monkeypatch.setenv("FLEETPULSE_KAFKA__SECURITY_PROTOCOL", "SASL_SSL")
    with pytest.raises(ConfigError) as info:
        Settings.load()
    assert " ".join(documented.group(1).split()) in " ".join(str(info.value).split())


def test_standard_webhooks_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(block("python"), str(DOC), "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("accepted ") and out[1] == "rejected: No matching signature found"
