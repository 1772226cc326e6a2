"""The archiver on a real broker: SIGKILLed mid-run and restarted, the lake holds every record exactly once;
a corrupted batch is quarantined with a report that says why; undecodable bytes are kept with their reason."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KTP
from kafka.admin import KafkaAdminClient
from kafka.structs import OffsetAndMetadata

from analytics.lake import Archiver, Lake, offsets
from analytics.lake.layout import TopicPartition
from analytics.lake.synthetic import synthetic_records
from ground.delta import DeltaTables
from ground.settings import Settings
from ground.settings.lake import ALL_FAMILIES
from schemas import Codec, DecodeError
from schemas.events import topic_family
from tests.analytics.lake import duck
from tests.conftest import KafkaCluster, unique_topic_name

pytestmark = pytest.mark.integration
CODEC = Codec()
PARTITIONS = {"inventory": 2, "samples": 3, "errors": 3, "findings": 1, "actions": 1, "alerts": 1, "dlq": 1}


@pytest.fixture
def fleet_topics(kafka: KafkaCluster, topic_factory: Callable[..., str]) -> dict[str, str]:
    """A fresh topic per family (family → name)."""
    return {
        family: topic_factory(
            f"archiver-{family}",
            partitions=PARTITIONS[family],
            cleanup_policy="compact" if family == "inventory" else "delete",
        )
        for family in ALL_FAMILIES
    }


def settings_for(kafka: KafkaCluster, topics: dict[str, str], lake: Path, **lake_fields: Any) -> Settings:
    return Settings.load(
        kafka={"bootstrap_servers": kafka.bootstrap_servers},
        topics={f: {"name": n, "partitions": PARTITIONS[f]} for f, n in topics.items()},
        lake={"path": str(lake), "group_id": unique_topic_name("archiver-group"), **lake_fields},
    )


def env_for(settings: Settings) -> dict[str, str]:
    """The same settings as FLEETPULSE_* variables, for an archiver subprocess."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("FLEETPULSE_") and k != "KAFKA_BOOTSTRAP_SERVERS"
    }
    env["FLEETPULSE_KAFKA__BOOTSTRAP_SERVERS"] = settings.bootstrap_servers
    for spec_family in ALL_FAMILIES:
        spec = getattr(settings.topics, spec_family)
        env[f"FLEETPULSE_TOPICS__{spec_family.upper()}__NAME"] = spec.name
        env[f"FLEETPULSE_TOPICS__{spec_family.upper()}__PARTITIONS"] = str(spec.partitions)
    lake = settings.lake
    env["FLEETPULSE_LAKE__PATH"] = lake.path
    env["FLEETPULSE_LAKE__GROUP_ID"] = lake.group_id
    env["FLEETPULSE_LAKE__FLUSH_RECORDS"] = str(lake.flush_records)
    env["FLEETPULSE_LAKE__FLUSH_SECONDS"] = str(lake.flush_seconds)
    return env


def produce(
    kafka: KafkaCluster,
    topics: dict[str, str],
    records: list[dict[str, Any]],
    extra: list[tuple[str, bytes]] = (),
) -> None:  # type: ignore[assignment]
    producer = KafkaProducer(
        **kafka.settings.kafka.kafka_python(kafka.bootstrap_servers),
        acks="all",
        enable_idempotence=True,
        linger_ms=5,
    )
    for record in records:
        producer.send(
            topics[topic_family(record["event_type"])],
            key=record["host_id"].encode(),
            value=CODEC.encode(record),
        )
    for topic, value in extra:
        producer.send(topic, key=b"junk", value=value)
    producer.flush(30)
    producer.close()


def topic_contents(
    kafka: KafkaCluster, topics: dict[str, str]
) -> tuple[Counter[str], dict[TopicPartition, int]]:
    """event_ids actually on the topics (decodable records) and each partition's end offset."""
    consumer = KafkaConsumer(
        **kafka.settings.kafka.kafka_python(kafka.bootstrap_servers), enable_auto_commit=False
    )
    tps = [KTP(t, p) for f, t in topics.items() for p in range(PARTITIONS[f])]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    end = consumer.end_offsets(tps)
    ids: Counter[str] = Counter()
    deadline = time.monotonic() + 30
    while any(consumer.position(tp) < end[tp] for tp in tps) and time.monotonic() < deadline:
        for messages in consumer.poll(timeout_ms=500).values():
            for m in messages:
                with contextlib.suppress(DecodeError):  # the garbage a test adds on purpose
                    ids[CODEC.decode(m.value).record["event_id"]] += 1
    consumer.close()
    return ids, {TopicPartition(tp.topic, tp.partition): end[tp] for tp in tps}


def lake_event_ids(lake: Path) -> Counter[str]:
    reader = Lake(lake)
    ids: Counter[str] = Counter()
    for table in reader.tables():
        ids.update(reader.scan(table).select("event_id").collect().get_column("event_id").to_list())
    return ids


def duckdb_event_ids(lake: Path) -> Counter[str]:
    """event_ids of every table as DuckDB's delta extension reads them (the Delta log, not fleetpulse)."""
    con = duck.connect()
    ids: Counter[str] = Counter()
    for table in Lake(lake).tables():
        rows = con.sql(f"SELECT event_id FROM delta_scan('{lake / table}')").fetchall()
        ids.update(r[0] for r in rows)
    con.close()
    return ids


def frontier(lake: Path) -> dict[TopicPartition, int]:
    """Next offset to archive per partition, of the one archiver group a test runs."""
    return {tp: n for (_, tp), n in Lake(lake).frontier().items()} if (lake / "_offsets").exists() else {}


def committed(lake: Path) -> int:
    return sum(frontier(lake).values())


def start_compaction(settings: Settings, procs: list[subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-c", "from fleetpulse.cli import main; main()", "lake", "compact", "--all-dates"]
    proc = subprocess.Popen(cmd, env=env_for(settings), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    procs.append(proc)
    return proc


@pytest.fixture
def archiver_processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def start_archiver(
    settings: Settings, procs: list[subprocess.Popen[bytes]], *args: str
) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-c", "from fleetpulse.cli import main; main()", "archive", *args]
    proc = subprocess.Popen(cmd, env=env_for(settings), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    procs.append(proc)
    return proc


def test_sigkilled_archiver_resumes_exactly_once(
    kafka: KafkaCluster,
    fleet_topics: dict[str, str],
    tmp_path: Path,
    archiver_processes: list[subprocess.Popen[bytes]],
) -> None:
    lake = tmp_path / "lake"
    settings = settings_for(kafka, fleet_topics, lake, flush_records=300, flush_seconds=60)
    records = synthetic_records(n_hosts=30, samples_per_host=40, span_ms=3 * 86_400_000)  # 1,384 records
    produce(kafka, fleet_topics, records)
    on_topics, end = topic_contents(kafka, fleet_topics)
    assert sum(on_topics.values()) == len(records)

    for delay in (0.0, 0.7):  # two crashes after some progress, at different points of the next batch
        before = committed(lake)
        proc = start_archiver(settings, archiver_processes)
        deadline = time.monotonic() + 40
        while committed(lake) < before + 300 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(delay)
        assert proc.poll() is None, (
            f"archiver exited early: {proc.stdout.read().decode() if proc.stdout else ''}"
        )
        compaction = start_compaction(settings, archiver_processes)  # killed mid-way beside the archiver
        time.sleep(
            3.0 + 2 * delay
        )  # about when its imports are done and it compacts (not detectable from outside)
        compaction.send_signal(signal.SIGKILL)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        compaction.wait(10)
    progress = committed(lake)
    assert 0 < progress < sum(end.values()), "the kills must land mid-run for this test to mean anything"

    final = start_archiver(settings, archiver_processes, "--until-idle", "--max-seconds", "100")
    out, _ = final.communicate(timeout=110)
    assert final.returncode == 0, out.decode()

    finished = start_compaction(settings, archiver_processes)
    out, _ = finished.communicate(timeout=110)
    assert finished.returncode == 0, out.decode()

    in_lake = lake_event_ids(lake)
    duplicated = {k: n for k, n in in_lake.items() if n > 1}
    assert not duplicated, f"{len(duplicated)} event_ids archived twice"
    assert set(in_lake) == set(on_topics)
    assert duckdb_event_ids(lake) == in_lake, "DuckDB's delta_scan reads what fleetpulse reads"
    assert frontier(lake) == end
    assert Lake(lake).quarantine() == []
    assert group_offsets(kafka, settings.lake.group_id) == end  # mirrored from the manifest, for lag tools


def test_corrupted_batch_is_quarantined_and_garbage_rejected(
    kafka: KafkaCluster, fleet_topics: dict[str, str], tmp_path: Path
) -> None:
    lake = tmp_path / "lake"
    settings = settings_for(kafka, fleet_topics, lake)
    records = synthetic_records(n_hosts=6, samples_per_host=2)
    now_ms = int(time.time() * 1000)
    corrupted = []
    for i, r in enumerate(r for r in records if r["event_type"] == "EccErrorObserved"):
        if i == 0:
            r = {**r, "payload": {**r["payload"], "count": -7}}
        elif i == 1:
            r = {**r, "ts": now_ms + 30 * 86_400_000}
        elif i == 2:
            r = {**r, "host_id": "h-unknown"}
        corrupted.append(r)
    good = [r for r in records if r["event_type"] != "EccErrorObserved"]
    garbage = [(fleet_topics["errors"], b"\x09definitely not avro"), (fleet_topics["samples"], b"")]
    produce(kafka, fleet_topics, good + corrupted, garbage)
    _, end = topic_contents(kafka, fleet_topics)

    stats = Archiver(settings).run(until_idle=True, max_seconds=50)

    assert stats.records == sum(end.values())
    assert stats.rejected_rows == 2
    assert stats.quarantined_rows == len(corrupted)
    reader = Lake(lake)
    assert reader.scan("ecc_error_observed").collect().height == 0
    assert sorted(lake_event_ids(lake)) == sorted(r["event_id"] for r in good)
    entries = Lake(lake).quarantine()
    assert {e.table for e in entries} == {"ecc_error_observed"}
    assert sum(e.rows for e in entries) == len(corrupted)
    failed = " | ".join(entries[0].failed_expectations)
    assert "(count)" in failed and "-7" in failed
    assert "(ts)" in failed
    assert "(host_id)" in failed and "h-unknown" in failed
    rejected = reader.rejected().collect()
    assert sorted(rejected.get_column("error_type").to_list()) == ["FramingError", "FramingError"]
    assert frontier(lake) == end


class Crash(BaseException):
    """Stands in for the process dying: not an Exception, so nothing on the way up handles it."""


def test_crash_between_table_commits_and_offset_commit(
    kafka: KafkaCluster, fleet_topics: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lake = tmp_path / "lake"
    # no resend window: its read-back would drop the newest replayed rows as repeats before the replay
    # check counts them (stored once either way); this test counts the replay alone
    settings = settings_for(kafka, fleet_topics, lake, flush_records=400, flush_seconds=60, resend_window_s=0)
    records = synthetic_records(
        n_hosts=40, samples_per_host=30, span_ms=2 * 86_400_000
    )  # 1,444 records: 4 batches
    produce(kafka, fleet_topics, records)
    on_topics, end = topic_contents(kafka, fleet_topics)

    real_commit = offsets.commit
    commits = {"n": 0}

    def commit_then_die(*args: Any) -> None:
        commits["n"] += 1
        if (
            commits["n"] == 4
        ):  # the start, two batches; the third batch's tables are committed, its offsets not
            raise Crash
        real_commit(*args)

    monkeypatch.setattr(offsets, "commit", commit_then_die)
    with pytest.raises(Crash):
        Archiver(settings).run(until_idle=True, max_seconds=50)
    assert committed(lake) == 800, "the offsets of two batches are committed"
    assert sum(lake_event_ids(lake).values()) == 1_200, "the third batch's rows are in its tables"

    monkeypatch.setattr(offsets, "commit", real_commit)
    stats = Archiver(settings).run(until_idle=True, max_seconds=50)
    assert stats.replayed_rows == 400, "the replay skips what the tables already hold"
    in_lake = lake_event_ids(lake)
    assert max(in_lake.values()) == 1
    assert set(in_lake) == set(on_topics)
    assert frontier(lake) == end


def test_group_offsets_catch_up_with_the_lake_at_start(
    kafka: KafkaCluster, fleet_topics: dict[str, str], tmp_path: Path
) -> None:
    """A crash between an offsets commit and the group commit leaves the group behind; the next start mirrors it."""
    lake = tmp_path / "lake"
    settings = settings_for(kafka, fleet_topics, lake)
    produce(kafka, fleet_topics, synthetic_records(n_hosts=10, samples_per_host=10))
    _, end = topic_contents(kafka, fleet_topics)
    Archiver(settings).run(until_idle=True, max_seconds=50)
    assert frontier(lake) == end

    # The lake is ahead of the Kafka group (the group commit after the last offsets commit was lost).
    consumer = KafkaConsumer(
        **kafka.settings.kafka.kafka_python(kafka.bootstrap_servers),
        group_id=settings.lake.group_id,
        enable_auto_commit=False,
    )
    consumer.commit({KTP(tp.topic, tp.partition): OffsetAndMetadata(0, "", -1) for tp in end})
    consumer.close()
    assert group_offsets(kafka, settings.lake.group_id) != end
    stats = Archiver(settings).run(until_idle=True, max_seconds=50)
    assert stats.records == 0
    assert group_offsets(kafka, settings.lake.group_id) == end


def group_offsets(kafka: KafkaCluster, group_id: str) -> dict[TopicPartition, int]:
    admin = KafkaAdminClient(**kafka.settings.kafka.kafka_python(kafka.bootstrap_servers))
    try:
        group = admin.list_group_offsets(group_id)[group_id]
    finally:
        admin.close()
    return {TopicPartition(tp.topic, tp.partition): o.offset for tp, o in group.items()}


def test_missing_topics_fail_with_what_to_do(kafka: KafkaCluster, tmp_path: Path) -> None:
    from analytics.errors import ArchiverError

    missing = unique_topic_name("never-created")
    settings = Settings.load(
        kafka={"bootstrap_servers": kafka.bootstrap_servers},
        topics={"alerts": {"name": missing, "partitions": 1}},
        lake={"path": str(tmp_path / "lake"), "families": ["alerts"], "topic_wait_s": 1},
    )
    with pytest.raises(ArchiverError, match="fleetpulse topics create") as info:
        Archiver(settings).run(until_idle=True)
    assert info.value.topic == missing
    assert not (tmp_path / "lake").exists(), "nothing is written before the topics are there"


def test_stopped_between_batches_then_resumed(
    kafka: KafkaCluster, fleet_topics: dict[str, str], tmp_path: Path
) -> None:
    import threading

    lake = tmp_path / "lake"
    settings = settings_for(kafka, fleet_topics, lake, flush_records=150, flush_seconds=60)
    records = synthetic_records(n_hosts=10, samples_per_host=40)  # 464 records
    produce(kafka, fleet_topics, records)
    on_topics, end = topic_contents(kafka, fleet_topics)

    stop = threading.Event()
    first = Archiver(settings).run(stop=stop, on_batch=lambda _staged, _stats: stop.set(), max_seconds=50)
    assert 0 < first.records < len(records)
    assert sum(lake_event_ids(lake).values()) == first.records == committed(lake)

    second = Archiver(settings).run(until_idle=True, max_seconds=50)
    assert first.records + second.records == sum(end.values())
    in_lake = lake_event_ids(lake)
    assert max(in_lake.values()) == 1 and set(in_lake) == set(on_topics)


def test_a_lake_ahead_of_its_topic_is_refused(
    kafka: KafkaCluster, fleet_topics: dict[str, str], tmp_path: Path
) -> None:
    from analytics.errors import ArchiverError

    lake = tmp_path / "lake"
    settings = settings_for(kafka, fleet_topics, lake)
    tp = TopicPartition(fleet_topics["alerts"], 0)
    offsets.commit(  # e.g. the topic was recreated
        DeltaTables(lake), settings.lake.group_id, {tp: None}, {tp: 1_000}, dt.datetime.now(dt.UTC)
    )
    with pytest.raises(ArchiverError, match="recreated"):
        Archiver(settings).run(until_idle=True, max_seconds=20)


def test_every_partition_reaches_its_end_after_an_inventory_catch_up(
    kafka: KafkaCluster, fleet_topics: dict[str, str], tmp_path: Path
) -> None:
    """New inventory records before a flush make the archiver read the inventory to its end first. It used to
    pause the other partitions meanwhile, and kafka-python 3.0.12 parked one's fetched records for good:
    that partition was never fetched again (errors[2] stuck at offset 44 of 100 here, every run)."""
    lake = tmp_path / "lake"
    settings = settings_for(
        kafka, fleet_topics, lake, flush_records=200, flush_seconds=60, members=2, member=1
    )
    produce(kafka, fleet_topics, synthetic_records(n_hosts=30, samples_per_host=20, span_ms=3 * 86_400_000))
    Archiver(settings).run(until_idle=True, max_seconds=30)  # half of the partitions first
    produce(
        kafka,
        fleet_topics,
        synthetic_records(n_hosts=30, samples_per_host=20, span_ms=3 * 86_400_000, seed=2, id_prefix="ev2"),
    )

    alone = settings.with_section("lake", members=1, member=0)
    stats = Archiver(alone, resplit=True).run(until_idle=True, max_seconds=60)

    _, end = topic_contents(kafka, fleet_topics)
    assert frontier(lake) == end
    assert stats.elapsed_s < 55, "idle only at the deadline: a partition stopped short of its end"
