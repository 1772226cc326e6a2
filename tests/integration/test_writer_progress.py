"""A producer that reports its own progress: the worker releases its finding without a quiet time.

The quiet time is set far longer than the test waits for the action: only the writer's report
(``schemas.progress``), read from the progress topic, can let the errors partition pass the
finding's time that soon.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from kafka import KafkaProducer

from ground.kafka import admin
from ground.settings import Settings
from producers.writer_progress import ProgressReporter
from schemas import Codec, EccErrorObserved
from streams.worker import spawn_worker
from tests.conftest import KafkaCluster, free_ports
from tests.streams.kafka_io import decoded, isolated_settings, wait_for

pytestmark = pytest.mark.integration

QUIET_S = 12.0  # longer than the action may take with the writer's reports
WRITER = "test-writer"
HOUR = 3_600_000


def dram_uce(host: str, n: int, ts: int) -> dict[str, object]:
    env = {"event_id": f"{host}-{n}", "host_id": host, "cluster": "c0", "ts": ts, "agent_seq": n + 1}
    payload = {"gpu": 1, "memory": "dram", "correctable": False, "count": 1}
    return EccErrorObserved(**env, payload=payload).to_record()  # type: ignore[arg-type]


def suspected(settings: Settings, host: str) -> bool:
    """Whether the host's 'suspected' action is on the actions topic."""
    return any(
        r["host_id"] == host and r["payload"]["kind"] == "suspected" for r in decoded(settings, "actions")
    )


@pytest.fixture
def settings(kafka: KafkaCluster) -> Settings:
    s = isolated_settings(kafka.settings)
    detect = s.detect.model_copy(update={"plan_quiet_s": QUIET_S, "progress_writers": (WRITER,)})
    s = s.model_copy(update={"detect": detect})
    admin.create_topics(s)
    return s


def test_a_reporting_writers_finding_is_planned_without_the_quiet_time(
    settings: Settings, tmp_path: Path
) -> None:
    codec, host, start = Codec(), "lemon-1", int(time.time() * 1000) - 2 * HOUR
    producer = KafkaProducer(**settings.kafka.kafka_python(settings.bootstrap_servers), acks="all")
    reporter = ProgressReporter(
        producer, WRITER, [settings.topics.errors.name], settings.topics.progress.name
    )
    (port,) = free_ports(1)
    worker = spawn_worker(settings, web_port=port, data_dir=tmp_path / "w", log_path=tmp_path / "w.log")
    try:
        worker.wait_ready(60)
        first = dram_uce(host, 0, start)
        reporter.sent(
            producer.send(settings.topics.errors.name, key=host.encode(), value=codec.encode(first))
        )
        reporter.report(start)
        time.sleep(QUIET_S + 2)  # every other source goes idle by the quiet rule (nothing is written to them)
        second = dram_uce(host, 1, start + HOUR)
        sent = time.monotonic()
        reporter.sent(
            producer.send(settings.topics.errors.name, key=host.encode(), value=codec.encode(second))
        )
        reporter.report(start + HOUR)
        wait_for(lambda: suspected(settings, host), QUIET_S, "the lemon's action")
        took = time.monotonic() - sent
    finally:
        producer.close()
        assert worker.stop() == 0, (tmp_path / "w.log").read_text()[-3000:]
    assert took < QUIET_S - 2, f"{took:.1f} s: held for the quiet time"
