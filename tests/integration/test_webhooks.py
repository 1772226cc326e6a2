"""Alert webhooks on a real broker: a receiver outage and a killed dispatcher lose and duplicate nothing.

Alerts go to a unique topic; the dispatcher (in-process, then as a ``fleetpulse dispatch``
subprocess killed with SIGKILL) delivers them to a real receiver over HTTP. "Nothing
duplicated" is judged by the receiver's JSONL file: every idempotency key exactly once.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaProducer
from pydantic import SecretStr

from ground.settings import Settings
from ground.settings.detect import WebhookSettings
from schemas import AlertRaised, Codec
from tests.conftest import KafkaCluster
from webhooks import Dispatcher, Outbox, ReceiverHandle, start_receiver

pytestmark = pytest.mark.integration
SECRET = "integration-secret-of-at-least-32-bytes"
CODEC = Codec()


def alert_record(i: int, run: str) -> dict[str, Any]:
    return AlertRaised(
        event_id=f"{run}-evt-{i}",
        host_id=f"c0-h{i:04d}",
        cluster="c0",
        ts=1_700_000_000_000 + i,
        payload={
            "alert_id": f"{run}-rma-{i}",
            "alertname": "NewRMA",
            "severity": "critical",
            "labels": {"rule": "dram_uce_repeat_gpu"},
            "annotations": {"summary": f"host {i}"},
        },
    ).to_record()


def produce(kafka: KafkaCluster, topic: str, records: list[dict[str, Any]]) -> None:
    producer = KafkaProducer(**kafka.settings.kafka.kafka_python(kafka.bootstrap_servers), acks="all")
    for r in records:
        producer.send(topic, key=r["payload"]["alert_id"].encode(), value=CODEC.encode(r))
    producer.flush(30)
    producer.close()


def stored_keys(out: Path) -> list[str]:
    if not out.exists():
        return []
    return [json.loads(line)["idempotency_key"] for line in out.read_text().splitlines() if line.strip()]


def wait_for(predicate: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(0.1)


def settings_for(kafka: KafkaCluster, url: str, data_dir: Path, group: str) -> Settings:
    webhooks = WebhookSettings(
        urls=[url],
        secret=SecretStr(SECRET),
        data_dir=data_dir,
        group_id=group,
        backoff_base_s=0.05,
        backoff_max_s=0.5,
        max_attempts=10_000,
        timeout_s=2.0,
    )
    return kafka.settings.model_copy(update={"webhooks": webhooks})


class DispatcherThread:
    """An in-process dispatcher on its own event loop, stoppable from the test thread."""

    def __init__(self, settings: Settings, topic: str) -> None:
        self.dispatcher = Dispatcher(settings, topic=topic)
        self.loop = asyncio.new_event_loop()
        self.stop_event = asyncio.Event()
        self.ready = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._main, daemon=True)
        self.thread.start()

    def _main(self) -> None:
        async def run() -> None:
            ready = asyncio.Event()
            task = asyncio.create_task(self.dispatcher.run(self.stop_event, ready=ready))
            await asyncio.wait([task, asyncio.create_task(ready.wait())], return_when=asyncio.FIRST_COMPLETED)
            self.ready.set()
            await task

        try:
            self.loop.run_until_complete(run())
        except BaseException as exc:
            self.error = exc
            self.ready.set()
        finally:
            self.loop.close()

    def stop(self) -> None:
        if self.thread.is_alive():
            self.loop.call_soon_threadsafe(self.stop_event.set)
        self.thread.join(30)
        self.dispatcher.close()
        if self.error is not None:
            raise self.error


def test_receiver_outage_loses_and_duplicates_nothing(
    kafka: KafkaCluster, topic_factory: Callable[..., str], tmp_path: Path
) -> None:
    topic = topic_factory("alerts-outage")
    out = tmp_path / "received.jsonl"
    receiver: ReceiverHandle = start_receiver(0, SECRET.encode(), out)
    port = receiver.port
    settings = settings_for(kafka, receiver.url, tmp_path / "outbox", f"wh-{topic}")
    batches = [[alert_record(i, topic) for i in range(b * 20, b * 20 + 20)] for b in range(3)]
    expected = sorted(r["payload"]["alert_id"] for batch in batches for r in batch)

    worker = DispatcherThread(settings, topic)
    try:
        assert worker.ready.wait(30) and worker.error is None
        produce(kafka, topic, batches[0])
        wait_for(
            lambda: len(stored_keys(out)) == 20 or not worker.thread.is_alive(), 30, "the first 20 alerts"
        )
        assert worker.error is None, repr(worker.error)

        receiver.stop()  # outage: the next 20 alerts pile up in the outbox, retried with backoff
        produce(kafka, topic, batches[1])
        time.sleep(3)
        metrics = worker.dispatcher.metrics
        retries = metrics.total(metrics.retries)
        assert retries > 0 and len(stored_keys(out)) == 20

        receiver = start_receiver(port, SECRET.encode(), out)
        produce(kafka, topic, batches[2])
        wait_for(lambda: len(stored_keys(out)) >= 60, 30, "all 60 alerts after the outage")
        time.sleep(0.5)  # a late duplicate would show up here
    finally:
        worker.stop()
        receiver.stop()
    keys = stored_keys(out)
    assert sorted(keys) == expected  # every alert, each exactly once
    with Outbox.in_dir(tmp_path / "outbox") as box:
        assert box.stats() == (60, 0, 60, 0)


def test_killed_dispatcher_resumes_from_outbox_and_kafka(
    kafka: KafkaCluster, topic_factory: Callable[..., str], tmp_path: Path
) -> None:
    topic = topic_factory("alerts-kill")
    out = tmp_path / "received.jsonl"
    # acknowledges 50 ms after storing: a kill catches requests stored but not yet acknowledged
    receiver = start_receiver(0, SECRET.encode(), out, ack_delay_s=0.05)
    expected = [alert_record(i, topic) for i in range(120)]
    env = {
        **os.environ,
        "FLEETPULSE_KAFKA__BOOTSTRAP_SERVERS": kafka.bootstrap_servers,
        "FLEETPULSE_WEBHOOKS__SECRET": SECRET,
        "FLEETPULSE_WEBHOOKS__GROUP_ID": f"wh-{topic}",
        "FLEETPULSE_WEBHOOKS__BACKOFF_BASE_S": "0.05",
        "FLEETPULSE_WEBHOOKS__BACKOFF_MAX_S": "0.5",
    }
    cmd = [
        sys.executable,
        "-c",
        "from fleetpulse.cli import main; main()",
        "dispatch",
        "--topic",
        topic,
        "--url",
        receiver.url,
        "--data-dir",
        str(tmp_path / "outbox"),
    ]

    def spawn() -> subprocess.Popen[bytes]:
        return subprocess.Popen(cmd, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    proc = spawn()
    try:
        produce(kafka, topic, expected[:80])
        wait_for(lambda: len(stored_keys(out)) >= 10 or proc.poll() is not None, 40, "first deliveries")
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        proc.send_signal(signal.SIGKILL)  # mid-run: some alerts delivered, some only in the outbox or Kafka
        proc.wait(10)
        at_kill = len(stored_keys(out))
        produce(kafka, topic, expected[80:])
        proc = spawn()
        wait_for(lambda: len(stored_keys(out)) >= 120 or proc.poll() is not None, 50, "all 120 alerts")
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)  # clean stop this time
        assert proc.wait(20) == 0, proc.stderr.read().decode() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        receiver.stop()
    keys = stored_keys(out)
    print(f"stored at kill: {at_kill}; duplicates absorbed by the receiver: {receiver.stats.duplicates}")
    assert at_kill < 120
    assert sorted(keys) == sorted(r["payload"]["alert_id"] for r in expected)
    assert len(keys) == len(set(keys))


def test_bad_records_on_the_alerts_topic_go_to_the_dlq(
    kafka: KafkaCluster, topic_factory: Callable[..., str], tmp_path: Path
) -> None:
    from kafka import KafkaConsumer

    topic, dlq = topic_factory("alerts-bad"), topic_factory("alerts-dlq")
    out = tmp_path / "received.jsonl"
    receiver = start_receiver(0, SECRET.encode(), out)
    settings = settings_for(kafka, receiver.url, tmp_path / "outbox", f"wh-{topic}")
    settings = settings.model_copy(
        update={
            "topics": settings.topics.model_copy(
                update={"dlq": settings.topics.dlq.model_copy(update={"name": dlq})}
            )
        }
    )
    producer = KafkaProducer(**kafka.settings.kafka.kafka_python(kafka.bootstrap_servers), acks="all")
    producer.send(topic, key=b"junk", value=b"not avro at all")
    producer.flush(30)
    producer.close()
    produce(kafka, topic, [alert_record(0, topic)])
    worker = DispatcherThread(settings, topic)
    try:
        wait_for(lambda: len(stored_keys(out)) == 1 or not worker.thread.is_alive(), 30, "the good alert")
    finally:
        worker.stop()
        receiver.stop()
    assert stored_keys(out) == [f"{topic}-rma-0"]
    consumer = KafkaConsumer(
        dlq,
        **kafka.settings.kafka.kafka_python(kafka.bootstrap_servers),
        auto_offset_reset="earliest",
        consumer_timeout_ms=5000,
    )
    dead = [CODEC.decode(m.value).record for m in consumer]
    consumer.close()
    assert len(dead) == 1
    payload = dead[0]["payload"]
    assert (payload["source_topic"], payload["source_offset"], payload["error_type"]) == (
        topic,
        0,
        "FramingError",
    )
    assert payload["original_value"] == b"not avro at all" and payload["original_key"] == b"junk"
