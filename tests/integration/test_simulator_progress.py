"""A worker with default settings, fed through the simulator's Kafka sink and its progress reports,
plans a finding without waiting for the quiet time.

Nothing tells the worker who writes the errors topic: the simulator's reports claim it is the only
writer (``simulator.writer_progress = "sole"``), and the worker trusts that claim. The quiet time
is set far longer than the test waits for the action, so only the reports can let the errors
partition pass the finding's time that soon.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ground.kafka import admin
from ground.settings import Settings
from producers.batches import RecordBatch
from producers.run_progress import RunReports
from producers.sinks.kafka import KafkaSink
from streams.worker import spawn_worker
from tests.conftest import KafkaCluster, free_ports
from tests.integration.test_writer_progress import HOUR, dram_uce, suspected
from tests.streams.kafka_io import isolated_settings, wait_for

pytestmark = pytest.mark.integration

QUIET_S = 6.0  # longer than the action may take with the simulator's reports


@pytest.fixture
def settings(kafka: KafkaCluster) -> Settings:
    s = isolated_settings(kafka.settings)
    assert s.detect.progress_writers == () and s.simulator.writer_progress == "sole"  # the defaults
    s = s.model_copy(update={"detect": s.detect.model_copy(update={"plan_quiet_s": QUIET_S})})
    admin.create_topics(s)
    return s


def test_the_simulators_finding_is_planned_without_the_quiet_time(settings: Settings, tmp_path: Path) -> None:
    host, start = "lemon-1", int(time.time() * 1000) - 2 * HOUR
    sink = KafkaSink(settings)
    reports = RunReports(settings, sink, "run-1", live=True)
    (port,) = free_ports(1)
    worker = spawn_worker(settings, web_port=port, data_dir=tmp_path / "w", log_path=tmp_path / "w.log")
    try:
        worker.wait_ready(60)
        sink.write(RecordBatch([dram_uce(host, 0, start)]))
        assert reports.tick(start, [])
        time.sleep(QUIET_S + 2)  # every other source goes idle by the quiet rule (nothing is written to them)
        sink.write(RecordBatch([dram_uce(host, 1, start + HOUR)]))
        sent = time.monotonic()
        assert reports.tick(start + HOUR, [])
        wait_for(lambda: suspected(settings, host), QUIET_S, "the lemon's action")
        took = time.monotonic() - sent
        reports.finish()
    finally:
        sink.close()
        assert worker.stop() == 0, (tmp_path / "w.log").read_text()[-3000:]
    assert took < QUIET_S - 2, f"{took:.1f} s: held for the quiet time"
