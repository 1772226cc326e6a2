"""The lake on an object store through the same code: moto's S3 server stands in for S3, delta-rs' conditional
writes stand in for any lock of ours."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pyarrow as pa
import pytest
from botocore.exceptions import BotoCoreError, ClientError

from analytics.lake import Archiver, Lake
from analytics.lake.synthetic import synthetic_records
from ground.delta import DeltaTables, with_date
from ground.settings import Settings
from ground.settings.lake import ALL_FAMILIES
from tests.conftest import KafkaCluster, unique_topic_name
from tests.integration.test_archiver import PARTITIONS, produce, topic_contents


@pytest.fixture(scope="module")
def s3() -> Iterator[dict[str, str]]:
    """moto's S3 server in a child process (delta-rs may hold the GIL while it waits for a reply, so the server
    cannot share the test's interpreter) with one bucket; the delta-rs storage options that reach it."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    options = {
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
        "AWS_ACCESS_KEY_ID": "fleetpulse",
        "AWS_SECRET_ACCESS_KEY": "fleetpulse-secret",
        "AWS_REGION": "us-east-1",
        "AWS_ALLOW_HTTP": "true",
    }
    client = boto3.client(
        "s3",
        endpoint_url=options["AWS_ENDPOINT_URL"],
        aws_access_key_id=options["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=options["AWS_SECRET_ACCESS_KEY"],
        region_name=options["AWS_REGION"],
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            client.create_bucket(Bucket="fleet")
            break
        except (BotoCoreError, ClientError):
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                raise
            time.sleep(0.2)
    yield options
    server.terminate()
    server.wait(10)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_concurrent_writers_commit_every_append(s3: dict[str, str]) -> None:
    """Four writers append to one table at once: every commit lands, none overwrites another."""
    root = f"s3://fleet/{unique_topic_name('concurrent')}"
    rows = with_date(pa.table({"event_id": [f"e{i}" for i in range(8)], "ts": list(range(8))}))
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            tables = DeltaTables(root, s3)
            for k in range(3):
                part = rows.slice(0, 8).set_column(
                    0, "event_id", pa.array([f"w{n}-{k}-{i}" for i in range(8)])
                )
                tables.append("t", part, partition_by=["date"], versions={f"writer-{n}": k + 1})
        except BaseException as exc:  # reported below, with the thread's own exception
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    tables = DeltaTables(root, s3)
    table = tables.open("t")
    assert table is not None and table.version() == 11  # 12 commits, versions 0…11
    ids = table.to_pyarrow_table(columns=["event_id"]).column("event_id").to_pylist()
    assert len(ids) == len(set(ids)) == 4 * 3 * 8
    assert [tables.version_of("t", f"writer-{n}") for n in range(4)] == [3, 3, 3, 3]


@pytest.mark.integration
def test_archiver_writes_an_s3_lake_exactly_once(
    kafka: KafkaCluster, topic_factory: Callable[..., str], s3: dict[str, str]
) -> None:
    topics = {
        family: topic_factory(
            f"s3-{family}",
            partitions=PARTITIONS[family],
            cleanup_policy="compact" if family == "inventory" else "delete",
        )
        for family in ALL_FAMILIES
    }
    root = f"s3://fleet/{unique_topic_name('archived')}"
    lake: dict[str, Any] = {"path": root, "storage_options": s3, "flush_records": 200}
    settings = Settings.load(
        kafka={"bootstrap_servers": kafka.bootstrap_servers},
        topics={f: {"name": n, "partitions": PARTITIONS[f]} for f, n in topics.items()},
        lake={**lake, "group_id": unique_topic_name("s3-archiver")},
    )
    records = synthetic_records(n_hosts=8, samples_per_host=20)
    produce(kafka, topics, records)
    on_topics, end = topic_contents(kafka, topics)

    half = Archiver(settings).run(until_idle=False, max_seconds=0.1)  # stops after its first flush
    rest = Archiver(settings).run(until_idle=True, max_seconds=60)
    assert half.records + rest.records == sum(end.values())

    reader = Lake(root, s3)
    ids: list[str] = []
    for table in reader.tables():
        ids += reader.scan(table).select("event_id").collect().get_column("event_id").to_list()
    assert sorted(ids) == sorted(on_topics)
    assert {tp: n for (_, tp), n in reader.frontier().items()} == end
