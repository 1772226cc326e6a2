"""``fleetpulse broker start`` with KAFKA_BOOTSTRAP_SERVERS: names the external cluster, or starts the local broker on --local."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import fleetpulse.broker.cli as broker_cli
from fleetpulse.broker.process import BrokerStatus
from fleetpulse.cli import app

EXTERNAL = {"KAFKA_BOOTSTRAP_SERVERS": "kafka-1.example:9092"}


class FakeBroker:
    """Stands in for the JVM: records that a start was asked for."""

    started: list[str] = []

    def __init__(self, settings: Any, **_: Any) -> None:
        self.settings = settings

    def pid(self) -> int | None:
        return None

    def start(self) -> BrokerStatus:
        FakeBroker.started.append(f"{self.settings.host}:{self.settings.port}")
        return BrokerStatus(True, True, 4242, "127.0.0.1:19092", Path("d"), Path("l"), "4.4.0")


@pytest.fixture
def fake_broker(monkeypatch: pytest.MonkeyPatch) -> type[FakeBroker]:
    FakeBroker.started = []
    monkeypatch.setattr(broker_cli, "LocalBroker", FakeBroker)
    return FakeBroker


def test_external_cluster_is_named_and_no_broker_is_started(fake_broker: type[FakeBroker]) -> None:
    result = CliRunner(env=EXTERNAL).invoke(app, ["broker", "start"])
    assert result.exit_code == 0, result.output
    assert "Using the external Kafka cluster at kafka-1.example:9092" in result.output
    assert "--local" in result.output
    assert fake_broker.started == []


def test_local_starts_the_local_broker_anyway(fake_broker: type[FakeBroker]) -> None:
    result = CliRunner(env=EXTERNAL).invoke(app, ["broker", "start", "--local"])
    assert result.exit_code == 0, result.output
    assert fake_broker.started == ["127.0.0.1:19092"]
    assert "ready" in result.output


class StoppedBroker(FakeBroker):
    def status(self) -> BrokerStatus:
        return BrokerStatus(False, False, None, "127.0.0.1:19092", Path("d"), Path("l"), "4.4.0")


def test_status_local_shows_the_local_broker_anyway(monkeypatch: pytest.MonkeyPatch) -> None:
    """With an external cluster configured, ``status --local`` reports the local broker, not the cluster."""
    monkeypatch.setattr(broker_cli, "LocalBroker", StoppedBroker)
    result = CliRunner(env=EXTERNAL).invoke(app, ["broker", "status", "--local"])
    assert result.exit_code == 1, result.output  # the local one is stopped
    assert "stopped" in result.output and "127.0.0.1:19092" in result.output
    assert "kafka-1.example" not in result.output
