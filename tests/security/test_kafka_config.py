"""KafkaSettings → what each client library receives (kafka-python, aiokafka, Faust), and its checks."""

from __future__ import annotations

import asyncio
import socket
import ssl
import threading
import time
from pathlib import Path

import faust
import pytest

from ground.errors import ConfigError
from ground.kafka.config import KafkaSettings
from ground.settings import Settings
from tests.security.tls import make_pki

BOOT = "127.0.0.1:9093,127.0.0.2:9093"


def sasl(password: str, **fields: object) -> KafkaSettings:
    base: dict[str, object] = {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_username": "fleet",
        "sasl_password": password,
    }
    return KafkaSettings(**{**base, **fields})


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_plaintext_passes_no_security_settings() -> None:
    kafka = KafkaSettings()
    assert kafka.kafka_python(BOOT) == {
        "bootstrap_servers": ["127.0.0.1:9093", "127.0.0.2:9093"],
        "security_protocol": "PLAINTEXT",
        "reconnect_backoff_max_ms": 1000,
    }
    assert kafka.aiokafka(BOOT) == {"bootstrap_servers": BOOT, "security_protocol": "PLAINTEXT"}
    assert kafka.faust_credentials() is None


def test_sasl_plaintext_reaches_each_library(password: str) -> None:
    kafka = sasl(password, sasl_mechanism="SCRAM-SHA-256")
    for cfg in (kafka.kafka_python(BOOT), kafka.aiokafka(BOOT)):
        assert cfg["security_protocol"] == "SASL_PLAINTEXT"
        assert cfg["sasl_mechanism"] == "SCRAM-SHA-256" and cfg["sasl_plain_username"] == "fleet"
        assert cfg["sasl_plain_password"] == password  # the real value for the library...
        assert password not in repr(cfg) and password not in str(cfg)  # ...masked in any printout
        assert not any(key.startswith("ssl") for key in cfg)
    creds = kafka.faust_credentials()
    assert isinstance(creds, faust.SASLCredentials)
    assert (creds.protocol.value, creds.mechanism.value) == ("SASL_PLAINTEXT", "SCRAM-SHA-256")
    assert (creds.username, creds.password, creds.ssl_context) == ("fleet", password, None)
    assert password not in repr(creds)


def test_mechanism_defaults_to_plain(password: str) -> None:
    kafka = sasl(password)
    assert kafka.kafka_python(BOOT)["sasl_mechanism"] == "PLAIN"
    assert kafka.faust_credentials().mechanism.value == "PLAIN"


def test_sasl_ssl_verifies_the_broker_with_the_given_ca(password: str, tmp_path: Path) -> None:
    pki = make_pki(tmp_path)
    kafka = sasl(password, security_protocol="SASL_SSL", ssl_cafile=str(pki.ca_file))
    cfg = kafka.kafka_python(BOOT)
    assert cfg["ssl_cafile"] == str(pki.ca_file) and cfg["ssl_check_hostname"] is True
    assert "ssl_certfile" not in cfg and cfg["sasl_plain_password"] == password
    context = kafka.aiokafka(BOOT)["ssl_context"]
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert len(context.get_ca_certs()) == 1  # our CA, not the system store
    creds = kafka.faust_credentials()
    assert creds.protocol.value == "SASL_SSL" and creds.ssl_context is not None


def test_ssl_with_a_client_certificate(tmp_path: Path) -> None:
    pki = make_pki(tmp_path)
    kafka = KafkaSettings(
        security_protocol="SSL",
        ssl_cafile=str(pki.ca_file),
        ssl_certfile=str(pki.server_cert),
        ssl_keyfile=str(pki.server_key),
    )
    cfg = kafka.kafka_python(BOOT)
    assert (cfg["ssl_certfile"], cfg["ssl_keyfile"]) == (str(pki.server_cert), str(pki.server_key))
    assert "sasl_mechanism" not in cfg
    assert isinstance(kafka.faust_credentials(), faust.SSLCredentials)
    assert "sasl_mechanism" not in kafka.aiokafka(BOOT)


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"FLEETPULSE_KAFKA__SECURITY_PROTOCOL": "SASL_SSL"}, "needs sasl_username and sasl_password"),
        (
            {
                "FLEETPULSE_KAFKA__SECURITY_PROTOCOL": "SASL_PLAINTEXT",
                "FLEETPULSE_KAFKA__SASL_USERNAME": "fleet",
            },
            "FLEETPULSE_KAFKA__SASL_PASSWORD",
        ),
        (
            {"FLEETPULSE_KAFKA__SECURITY_PROTOCOL": "SSL", "FLEETPULSE_KAFKA__SSL_CAFILE": "/nope/ca.pem"},
            "/nope/ca.pem",
        ),
        (
            {"FLEETPULSE_KAFKA__SECURITY_PROTOCOL": "SSL", "FLEETPULSE_KAFKA__SSL_CERTFILE": __file__},
            "both ssl_certfile and ssl_keyfile",
        ),
        ({"FLEETPULSE_KAFKA__SASL_MECHANISM": "GSSAPI"}, "kafka.sasl_mechanism"),
    ],
)
def test_incomplete_security_settings_fail_at_start_up(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], says: str
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match="invalid configuration") as info:
        Settings.load()
    assert says in str(info.value)


def test_check_login_is_free_without_security(monkeypatch: pytest.MonkeyPatch) -> None:
    import aiokafka.conn

    def no_connection(*args: object, **kwargs: object) -> None:
        raise AssertionError("PLAINTEXT needs no login check")

    monkeypatch.setattr(aiokafka.conn, "create_conn", no_connection)
    KafkaSettings().check_login(f"127.0.0.1:{closed_port()}")


def test_check_login_gives_up_after_its_timeout_for_all_addresses(password: str) -> None:
    socks = [socket.socket() for _ in range(3)]
    try:
        for sock in socks:  # accept TCP, never answer Kafka
            sock.bind(("127.0.0.1", 0))
            sock.listen()
        silent = ",".join(f"127.0.0.1:{sock.getsockname()[1]}" for sock in socks)
        started = time.monotonic()
        sasl(password).check_login(silent, timeout_s=0.4)
        assert time.monotonic() - started < 0.9  # not 0.4 s per address
    finally:
        for sock in socks:
            sock.close()


def test_check_login_leaves_an_unreachable_cluster_to_the_client(password: str) -> None:
    started = time.monotonic()
    sasl(password).check_login(f"127.0.0.1:{closed_port()}", timeout_s=2.0)
    assert time.monotonic() - started < 1.0


def test_check_login_works_inside_a_running_loop(password: str) -> None:
    kafka = sasl(password)

    async def inside() -> None:
        kafka.check_login(f"127.0.0.1:{closed_port()}")  # sync call from async code: its own thread
        await kafka.check_login_async(f"127.0.0.1:{closed_port()}")

    asyncio.run(inside())


def test_check_login_leaves_the_callers_event_loop_alone(password: str) -> None:
    """asyncio.run() in the caller's thread would unset its current loop, which Faust relies on."""
    kafka = sasl(password)
    seen: list[object] = []

    def caller() -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            kafka.check_login(f"127.0.0.1:{closed_port()}")
            seen.append(asyncio.get_event_loop_policy().get_event_loop() is loop)
        except RuntimeError as exc:
            seen.append(exc)
        finally:
            loop.close()

    thread = threading.Thread(target=caller)
    thread.start()
    thread.join(10)
    assert seen == [True]
