"""A detect worker restarted after a crash gets its partitions back at once (static group membership).

Without a group.instance.id the crashed worker stays a member until its session times out, and
the rebalance its successor starts waits for it: with a 60 s session timeout, a minute.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ground.kafka import admin
from ground.settings import Settings
from streams.worker import WorkerProcess, spawn_worker
from tests.conftest import KafkaCluster, free_ports, pointed_at
from tests.streams.kafka_io import isolated_settings

pytestmark = pytest.mark.integration

SESSION_TIMEOUT_S = 60.0


def started(settings: Settings, port: int, data_dir: Path, log: Path) -> tuple[WorkerProcess, float]:
    """A worker and the seconds it took from spawn to partitions assigned."""
    t0 = time.monotonic()
    worker = spawn_worker(settings, web_port=port, data_dir=data_dir, log_path=log)
    worker.wait_ready(180)
    return worker, time.monotonic() - t0


def test_a_restarted_worker_does_not_wait_out_the_session_timeout(
    kafka: KafkaCluster, tmp_path: Path
) -> None:
    settings = isolated_settings(pointed_at(Settings.load(), kafka.bootstrap_servers))
    settings = settings.model_copy(
        update={"detect": settings.detect.model_copy(update={"session_timeout_s": SESSION_TIMEOUT_S})}
    )
    admin.create_topics(settings)
    (port,) = free_ports(1)
    first, cold_start_s = started(settings, port, tmp_path / "w", tmp_path / "first.log")
    first.kill()  # a crash: no LeaveGroup, the member stays until its session times out
    killed = time.monotonic()
    second, _ = started(settings, port, tmp_path / "w", tmp_path / "second.log")
    back_after_s = time.monotonic() - killed
    second.stop()
    # the successor is ready as fast as a cold start, not after the crashed member's session expired
    assert back_after_s < min(SESSION_TIMEOUT_S - 10, cold_start_s + 20), (back_after_s, cold_start_s)
