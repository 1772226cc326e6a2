"""ground.kafka.admin without a broker: response classification and fast, clear failures."""

from __future__ import annotations

import socket
import time

import pytest

from ground.errors import TopicError
from ground.kafka import admin
from ground.kafka.config import KafkaSettings
from ground.settings import Settings


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_classify_created_and_existing():
    response = {
        "topics": [
            {"name": "a", "error_code": 0, "error_message": None},
            {"name": "b", "error_code": 36, "error_message": "Topic 'b' already exists."},
        ]
    }
    assert admin.classify_create_response(response) == admin.TopicReport(created=["a"], existing=["b"])


def test_classify_failure_names_topic_and_error():
    response = {
        "topics": [
            {"name": "ok", "error_code": 0},
            {
                "name": "bad",
                "error_code": 38,
                "error_message": "Replication factor: 3 larger than brokers: 1.",
            },
        ]
    }
    with pytest.raises(TopicError, match=r"bad: InvalidReplicationFactorError \(Replication factor: 3"):
        admin.classify_create_response(response)


def test_tcp_reachable():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        assert admin.tcp_reachable(f"127.0.0.1:{closed_port()},127.0.0.1:{port}")
    assert not admin.tcp_reachable(f"127.0.0.1:{port}")
    assert not admin.tcp_reachable("not-an-address")


def test_stopped_local_broker_fails_at_once_with_a_hint(monkeypatch: pytest.MonkeyPatch):
    for name in ("KAFKA_BOOTSTRAP_SERVERS", "FLEETPULSE_KAFKA__BOOTSTRAP_SERVERS"):
        monkeypatch.delenv(name, raising=False)
    settings = Settings.load(broker={"port": closed_port()})
    assert settings.uses_local_broker
    began = time.monotonic()
    with pytest.raises(admin.KafkaUnavailableError, match="fleetpulse broker start"):
        admin.create_topics(settings)
    assert time.monotonic() - began < 2


def test_wait_for_broker_times_out():
    with pytest.raises(admin.KafkaUnavailableError, match="within 0.5 s"):
        admin.wait_for_broker(f"127.0.0.1:{closed_port()}", KafkaSettings(), timeout=0.5)
    assert not admin.broker_answers(f"127.0.0.1:{closed_port()}", KafkaSettings(), timeout_s=0.5)
