"""The SASL password and the webhook HMAC secret never show in reprs, config errors, logs or CLI output."""

from __future__ import annotations

import logging
import socket
import sys
import traceback

import pytest
from kafka.admin import KafkaAdminClient

from ground.errors import ConfigError
from ground.kafka.config import MASK, KafkaSettings, SecretFilter, protect_client_logs
from ground.settings import Settings


def sasl_env(monkeypatch: pytest.MonkeyPatch, password: str, hmac_secret: str, bootstrap: str) -> None:
    for name, value in {
        "FLEETPULSE_KAFKA__BOOTSTRAP_SERVERS": bootstrap,
        "FLEETPULSE_KAFKA__SECURITY_PROTOCOL": "SASL_PLAINTEXT",
        "FLEETPULSE_KAFKA__SASL_USERNAME": "fleet",
        "FLEETPULSE_KAFKA__SASL_PASSWORD": password,
        "FLEETPULSE_WEBHOOKS__SECRET": hmac_secret,
    }.items():
        monkeypatch.setenv(name, value)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def everything_about(exc: BaseException) -> str:
    """What a user could ever see of an error: its message and the whole chained traceback."""
    return "".join(traceback.format_exception(exc))


# -- settings ----------------------------------------------------------------------------------


def test_settings_never_show_secrets(
    monkeypatch: pytest.MonkeyPatch, password: str, hmac_secret: str
) -> None:
    sasl_env(monkeypatch, password, hmac_secret, "kafka.example:9093")
    settings = Settings.load()
    assert settings.kafka.sasl_password is not None and settings.webhooks.secret is not None
    assert settings.kafka.sasl_password.get_secret_value() == password  # loaded...
    assert settings.webhooks.secret.get_secret_value() == hmac_secret
    shown = [
        repr(settings),
        str(settings),
        settings.model_dump_json(),
        repr(settings.model_dump()),
        str(settings.kafka),
    ]
    for text in shown:  # ...but never shown
        assert password not in text and hmac_secret not in text
    assert "**********" in repr(settings.kafka)


@pytest.mark.parametrize(
    "mistake",
    [
        {"FLEETPULSE_KAFKA__SASL_PASWORD": "{password}"},  # a misspelt key: pydantic quotes the input
        {"FLEETPULSE_WEBHOOKS__SECRETS": "{hmac}"},
        {"FLEETPULSE_KAFKA": '{{"security_protocol": "SASL_SSL", "sasl_password": "{password}"}}'},
        {"FLEETPULSE_KAFKA__SASL_PASSWORD": "{password}", "FLEETPULSE_KAFKA__SECURITY_PROTOCOL": "SASL"},
        {"FLEETPULSE_WEBHOOKS__SECRET": "{hmac}", "FLEETPULSE_WEBHOOKS__TIMEOUT_S": "-1"},
    ],
)
def test_config_errors_never_quote_secrets(
    monkeypatch: pytest.MonkeyPatch, password: str, hmac_secret: str, mistake: dict[str, str]
) -> None:
    for name, value in mistake.items():
        monkeypatch.setenv(name, value.format(password=password, hmac=hmac_secret))
    with pytest.raises(ConfigError) as info:
        Settings.load()
    text = everything_about(info.value)
    assert "invalid configuration" in text
    assert password not in text and hmac_secret not in text


def test_config_file_errors_never_quote_secrets(password: str, hmac_secret: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "fleetpulse.toml"
    config.write_text(
        f'[kafka]\nsasl_passwd = "{password}"\n\n[webhooks]\nsecret = "{hmac_secret}"\nurls = 3\n'
    )
    with pytest.raises(ConfigError) as info:
        Settings.load(config)
    text = everything_about(info.value)
    assert "kafka.sasl_passwd" in text and "webhooks.urls" in text
    assert password not in text and hmac_secret not in text


# -- logs of the client libraries --------------------------------------------------------------


@pytest.mark.parametrize("secret", ["plain-Secret-123", 'it\'s a "quoted" \\ secret %s', "pässwörd-ß-€"])
def test_filter_masks_a_secret_however_the_library_prints_it(secret: str) -> None:
    redact = SecretFilter()
    redact.add(secret)
    auth = b"fleet\x00fleet\x00" + secret.encode()
    for msg, args in [
        ("config %s", ({"sasl_plain_password": secret},)),  # a dict: repr of the str
        ("Request 3: %s", (f"SaslAuthenticateRequest(auth_bytes={auth!r})",)),  # bytes repr
        ("Send: %s", (bytearray(auth),)),
        (f"plain {secret}", None),
    ]:
        record = logging.LogRecord("kafka.protocol.parser", logging.DEBUG, __file__, 1, msg, args, None)
        assert redact.filter(record) is True  # masked, never dropped
        shown = record.getMessage()
        assert secret not in shown and repr(secret)[1:-1] not in shown and MASK in shown


def test_filter_leaves_other_records_untouched() -> None:
    redact = SecretFilter()
    redact.add("hunter2-hunter2")
    record = logging.LogRecord(
        "aiokafka.conn", logging.DEBUG, __file__, 1, "%d%% done for %s", (50, "fleet"), None
    )
    redact.filter(record)
    assert (record.msg, record.args) == ("%d%% done for %s", (50, "fleet"))


def test_protection_is_installed_once_per_logger(password: str) -> None:
    kafka = KafkaSettings(security_protocol="SASL_PLAINTEXT", sasl_username="fleet", sasl_password=password)
    for _ in range(3):
        kafka.kafka_python("127.0.0.1:9092")
        kafka.aiokafka("127.0.0.1:9092")
    protect_client_logs(password)
    for name in ("kafka.admin.client", "kafka.protocol.parser", "kafka.net.connection", "aiokafka.conn"):
        filters = [f for f in logging.getLogger(name).filters if isinstance(f, SecretFilter)]
        assert len(filters) == 1


def test_kafka_python_admin_debug_log_of_its_config_is_masked(
    password: str, caplog: pytest.LogCaptureFixture
) -> None:
    """KafkaAdminClient logs every constructor argument at DEBUG, the SASL password included."""
    caplog.set_level(logging.DEBUG)
    kafka = KafkaSettings(security_protocol="SASL_PLAINTEXT", sasl_username="fleet", sasl_password=password)
    with pytest.raises(Exception):  # noqa: B017 (nobody listens: kafka-python's own timeout error)
        KafkaAdminClient(**kafka.kafka_python(f"127.0.0.1:{closed_port()}"), bootstrap_timeout_ms=100)
    assert "Starting KafkaAdminClient with configuration" in caplog.text
    assert "'sasl_plain_password': '**********'" in caplog.text and password not in caplog.text


# -- CLI -----------------------------------------------------------------------------------------


def run_cli(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    from fleetpulse.cli import main

    monkeypatch.setattr(sys, "argv", ["fleetpulse", *args])
    with pytest.raises(SystemExit) as info:
        main()
    return int(info.value.code or 0)


def test_cli_error_for_an_unreachable_broker_shows_no_secret(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    password: str,
    hmac_secret: str,
) -> None:
    caplog.set_level(logging.DEBUG)
    sasl_env(monkeypatch, password, hmac_secret, f"127.0.0.1:{closed_port()}")
    code = run_cli(monkeypatch, "--verbose", "topics", "list", "--timeout", "0.3")
    out, err = capsys.readouterr()
    assert code == 2 and "error: no Kafka broker listens at 127.0.0.1" in err
    for text in (out, err, caplog.text):
        assert password not in text and hmac_secret not in text


def test_cli_config_errors_show_no_secret(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], password: str, hmac_secret: str
) -> None:
    sasl_env(monkeypatch, password, hmac_secret, "127.0.0.1:9")
    monkeypatch.setenv("FLEETPULSE_KAFKA__SASL_MECHANISM", password)  # a password pasted in the wrong place
    assert run_cli(monkeypatch, "topics", "list") == 2
    _, err = capsys.readouterr()
    assert "kafka.sasl_mechanism" in err and password not in err and hmac_secret not in err


def test_cli_dispatch_without_urls_shows_no_secret(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    password: str,
    hmac_secret: str,
    tmp_path,
) -> None:  # type: ignore[no-untyped-def]
    sasl_env(monkeypatch, password, hmac_secret, "127.0.0.1:9")
    assert run_cli(monkeypatch, "dispatch", "--data-dir", str(tmp_path / "outbox")) == 2
    out, err = capsys.readouterr()
    assert "no webhook URLs" in err and hmac_secret not in out + err and password not in out + err
