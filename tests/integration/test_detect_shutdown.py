"""A detect worker ends on SIGTERM within its shutdown timeout even when its broker has gone away."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from fleetpulse.broker import LocalBroker
from ground.kafka import admin
from ground.settings import Settings
from streams.worker import spawn_worker
from tests.conftest import free_ports, pointed_at
from tests.streams.kafka_io import isolated_settings

pytestmark = pytest.mark.integration


def test_sigterm_ends_a_worker_whose_broker_is_gone(
    local_broker_factory: Callable[..., LocalBroker], tmp_path: Path
) -> None:
    broker = local_broker_factory()
    broker.start()
    settings = isolated_settings(pointed_at(Settings.load(), broker.bootstrap_servers))
    budget = 5.0
    settings = settings.with_section("detect", shutdown_timeout_s=budget)
    admin.create_topics(settings)
    (port,) = free_ports(1)
    worker = spawn_worker(settings, web_port=port, data_dir=tmp_path / "w", log_path=tmp_path / "w.log")
    try:
        worker.wait_ready(90)
        broker.stop()
        time.sleep(3)  # the worker notices: its clients start retrying
        sent = time.monotonic()
        worker.process.send_signal(signal.SIGTERM)
        code = worker.process.wait(30)  # without the bound it never returned
        took = time.monotonic() - sent
    finally:
        worker.kill()
    assert took < budget, took  # the process is gone within the budget, its exit included
    log = (tmp_path / "w.log").read_text(errors="replace")
    assert code == 0 or f"shutdown did not finish within {budget:g} s" in log, (code, log[-2000:])
