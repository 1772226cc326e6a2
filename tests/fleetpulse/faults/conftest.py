"""Fault-suite fixtures: one Kafka broker of the suite's own (restarted by broker-restart), a context per test."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fleetpulse.broker import LocalBroker, ToolMissingError
from fleetpulse.faults.context import FaultContext
from ground.settings import Settings


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
    run_id = f"ft-{uuid.uuid4().hex[:8]}"
    return FaultContext(
        base=Settings.load(),
        broker=fault_broker,
        out_dir=tmp_path,
        run_id=run_id,
        command=f"pytest {request.node.nodeid}",
        say=print,
    )
