"""Fault-suite fixtures: one Kafka broker of the suite's own (restarted by broker-restart), a context per test."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from fleetpulse.broker import LocalBroker, ToolMissingError
from fleetpulse.faults.context import BrokerControl, FaultContext
from ground.settings import Settings
from tests.conftest import KafkaCluster


@pytest.fixture(scope="session")
def fault_broker(local_broker_factory: Callable[..., LocalBroker]) -> Iterator[LocalBroker]:
    """Not the session's ``kafka``: this one gets restarted, so no other test may depend on it."""
    broker = local_broker_factory()
    try:
        broker.start()
    except ToolMissingError as exc:
        pytest.skip(f"no local Kafka broker for the fault suite: {exc}")
    yield broker
    broker.stop()


@pytest.fixture
def fault_context(fault_broker: LocalBroker, tmp_path: Path, request: pytest.FixtureRequest) -> FaultContext:
    return context(fault_broker, tmp_path, request)


@dataclass(frozen=True)
class SharedBroker:
    """The session's broker for scenarios that never touch it (the webhook receiver's): restarting it is refused."""

    bootstrap_servers: str

    def restart(self) -> None:
        raise AssertionError("this scenario runs on the session's shared broker: it must not restart it")

    stop = start = restart


@pytest.fixture
def shared_fault_context(kafka: KafkaCluster, tmp_path: Path, request: pytest.FixtureRequest) -> FaultContext:
    return context(SharedBroker(kafka.bootstrap_servers), tmp_path, request)


def context(broker: BrokerControl, tmp_path: Path, request: pytest.FixtureRequest) -> FaultContext:
    return FaultContext(
        base=Settings.load(),
        broker=broker,
        out_dir=tmp_path,
        run_id=f"ft-{uuid.uuid4().hex[:8]}",
        command=f"pytest {request.node.nodeid}",
        say=print,
    )
