"""Sinks: one contract for all of them, then the lake sink's Delta tables and the Kafka sink's bookkeeping."""

from __future__ import annotations

import hashlib
import threading
import time
from collections import Counter
from pathlib import Path

import polars as pl
import pytest
from deltalake import DeltaTable
from kafka.errors import KafkaTimeoutError
from kafka.future import Future
from kafka.partitioner.default import murmur2

from producers.batches import RecordBatch
from producers.errors import DeliveryError, SinkError
from producers.sinks.base import MemorySink, NullSink, Sink
from producers.sinks.kafka import KafkaSink, pick_compression
from producers.sinks.parquet import ParquetSink
from schemas import Codec
from schemas.arrow import table_name
from tests.producers.conftest import START


class FakeProducer:
    """Records sends; completes futures at once (or fails / holds them when told)."""

    def __init__(self, **config) -> None:
        self.config = config
        self.sent: list[tuple[str, bytes, bytes, int | None]] = []
        self.fail_every = 0
        self.hold = False
        self.held: list[Future] = []
        self.closed = False

    def partitions_for(self, topic: str) -> set[int]:
        return {0, 1, 2, 3, 4, 5}

    def send(self, topic, key=None, value=None, partition=None) -> Future:
        self.sent.append((topic, key, value, partition))
        future = Future()
        if self.hold:
            self.held.append(future)
        elif self.fail_every and len(self.sent) % self.fail_every == 0:
            future.failure(KafkaTimeoutError("expired"))
        else:
            future.success(None)
        return future

    def release(self) -> None:
        for f in self.held:
            f.success(None)
        self.held.clear()

    def flush(self, timeout=None) -> None:
        self.release()

    def close(self) -> None:
        self.closed = True


def _records(n: int = 20) -> list[dict]:
    out = []
    for i in range(n):
        host = f"h{i % 4}"
        out.append(
            {
                "event_id": f"r-{host}-{i}",
                "event_type": "XidRaised" if i % 3 else "HostInventoried",
                "schema_version": 1,
                "host_id": host,
                "cluster": "c",
                "ts": START + i * 3_600_000,
                "agent_seq": i + 1,
                "payload": {"gpu": 0, "xid": 79, "pci_bus_id": "0000:18:00.0", "message": "m"}
                if i % 3
                else {
                    "rack": "r",
                    "fabric": "roce",
                    "maintenance_domain": "d",
                    "sku": "s",
                    "install_ts": 0,
                    "gpu_count": 8,
                    "nic_ports": 8,
                },
            }
        )
    return out


def _kafka_sink(settings, **tuning) -> tuple[KafkaSink, FakeProducer]:
    made: list[FakeProducer] = []

    def factory(**config):
        made.append(FakeProducer(**config))
        return made[-1]

    if tuning:
        simulator = settings.simulator.model_copy(
            update={"producer": settings.simulator.producer.model_copy(update=tuning)}
        )
        settings = settings.model_copy(update={"simulator": simulator})
    sink = KafkaSink(settings, producer_factory=factory)
    return sink, made[0]


# -- contract: every sink accepts batches and closes cleanly ---------------------------------


@pytest.fixture(params=["null", "memory", "parquet", "kafka-fake"])
def any_sink(request, tmp_path: Path, settings) -> Sink:
    if request.param == "null":
        return NullSink()
    if request.param == "memory":
        return MemorySink()
    if request.param == "parquet":
        return ParquetSink(tmp_path / "lake", run_id="r")
    return _kafka_sink(settings)[0]


def test_every_sink_takes_batches_and_closes(any_sink: Sink, tmp_path: Path) -> None:
    assert isinstance(any_sink, Sink)
    records = _records()
    any_sink.write(RecordBatch(records[:12]))
    any_sink.write(RecordBatch([]))
    any_sink.write(RecordBatch(records[12:]))
    any_sink.close()
    codec = Codec()
    values = [codec.encode(r) for r in records]
    # what each sink passed on after close: all 20 events, once, in order where the sink keeps order
    if isinstance(any_sink, NullSink):
        assert any_sink.bytes == sum(map(len, values))
    elif isinstance(any_sink, MemorySink):
        digest = hashlib.sha256()
        for r, value in zip(records, values, strict=True):
            digest.update(r["host_id"].encode())
            digest.update(value)
        assert any_sink.closed and any_sink.count == 20 and any_sink.records == records
        assert any_sink.digest.hexdigest() == digest.hexdigest()
    elif isinstance(any_sink, ParquetSink):
        assert any_sink.tables == {"xid_raised", "host_inventoried"}
        ids = [i for t in any_sink.tables for i in pl.read_delta(str(tmp_path / "lake" / t))["event_id"]]
        assert sorted(ids) == sorted(r["event_id"] for r in records)
    else:
        assert isinstance(any_sink, KafkaSink) and any_sink.sent == any_sink.acked == 20
        assert [value for _, _, value, _ in any_sink.producer.sent] == values
        assert any_sink.producer.closed


# -- parquet -------------------------------------------------------------------------------


def _lake_rows(lake: Path, event_type: str) -> pl.DataFrame:
    return pl.read_delta(str(lake / table_name(event_type)))


def test_parquet_sink_writes_delta_tables_partitioned_by_date(tmp_path: Path) -> None:
    sink = ParquetSink(tmp_path, run_id="abc", batch_rows=5)
    records = _records(60)  # 60 hours: three event dates
    for i in range(0, 60, 10):
        sink.write(RecordBatch(records[i : i + 10]))
    sink.close()
    xid = DeltaTable(str(tmp_path / table_name("XidRaised")))
    assert xid.metadata().partition_columns == ["date"]
    assert sink.tables == {"xid_raised", "host_inventoried"} and sink.skipped == 0
    table = _lake_rows(tmp_path, "XidRaised")
    assert table.height == sum(r["event_type"] == "XidRaised" for r in records)
    assert set(table.columns) >= {"event_id", "ts", "host_id", "xid", "gpu", "date"}
    day = pl.from_epoch("ts", time_unit="ms").dt.date()
    assert table.filter(pl.col("date") != day).is_empty()  # every row sits in its event date
    assert sorted(set(table["date"].cast(pl.String))) == ["2025-01-01", "2025-01-02", "2025-01-03"]
    folders = {Path(uri).parent.name for uri in xid.file_uris()}
    assert folders == {
        "date=2025-01-01",
        "date=2025-01-02",
        "date=2025-01-03",
    }  # hive-style, like the archiver's


def test_parquet_sink_rerun_of_the_same_run_adds_nothing(tmp_path: Path) -> None:
    records = _records(60)

    def run(run_id: str, upto: int = 60) -> ParquetSink:
        sink = ParquetSink(tmp_path, run_id=run_id, batch_rows=4)
        for i in range(0, upto, 10):
            sink.write(RecordBatch(records[i : i + 10]))
        sink.close()  # an interrupted run closes too: its last commits hold partial buffers
        return sink

    run("abc", upto=30)
    again = run("abc")
    assert 0 < again.skipped < 60 and again.commits > 0
    assert run("abc").commits == 0  # the whole run is in the lake
    for event_type in ("XidRaised", "HostInventoried"):
        ids = _lake_rows(tmp_path, event_type)["event_id"]
        assert ids.is_unique().all() and ids.len() == sum(r["event_type"] == event_type for r in records)
    run("other")  # another run id is another run: its rows are new
    assert _lake_rows(tmp_path, "XidRaised").height == 2 * sum(
        r["event_type"] == "XidRaised" for r in records
    )
    version = DeltaTable(str(tmp_path / "xid_raised")).transaction_version("simulator:abc:2025-01-01")
    assert version == sum(r["event_type"] == "XidRaised" and r["ts"] < START + 86_400_000 for r in records)


def _each_event_once(lake: Path, records: list[dict]) -> None:
    for event_type in ("XidRaised", "HostInventoried"):
        table = _lake_rows(lake, event_type)
        assert table["event_id"].is_unique().all()
        assert table.height == sum(r["event_type"] == event_type for r in records)


def test_parquet_sink_stores_an_event_delivered_twice_once(tmp_path: Path) -> None:
    records = _records(30)
    resent = [records[3], records[7], records[3]]  # the simulator resends within a tick
    sink = ParquetSink(tmp_path, run_id="dup", batch_rows=4)
    sink.write(RecordBatch(records[:10] + resent))
    sink.write(RecordBatch(records[10:]))
    sink.close()
    assert sink.repeats == 3
    _each_event_once(tmp_path, records)


def test_parquet_sink_stores_a_copy_held_back_to_a_later_batch_once(tmp_path: Path) -> None:
    records = _records(30)
    late = [records[3], records[12]]  # one copy of each came late: in a later tick's batch, after the flush
    sink = ParquetSink(tmp_path, run_id="late", batch_rows=4)
    sink.write(RecordBatch(records[:20]))
    sink.write(RecordBatch(records[20:] + late))
    sink.close()
    assert sink.repeats == 2
    _each_event_once(tmp_path, records)


def test_parquet_sink_reports_write_errors(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    sink = ParquetSink(blocker, run_id="r", batch_rows=1)
    with pytest.raises(SinkError, match="parquet sink"):
        sink.write(RecordBatch(_records(3)))


# -- kafka (fake producer) -----------------------------------------------------------------


def test_kafka_sink_configures_a_safe_producer(settings) -> None:
    sink, producer = _kafka_sink(settings)
    cfg = producer.config
    assert cfg["acks"] == "all" and cfg["enable_idempotence"] is True
    assert cfg["compression_type"] == pick_compression("auto") in ("lz4", "zstd", "gzip")
    assert cfg["delivery_timeout_ms"] >= 120_000 and cfg["linger_ms"] > 0
    sink.close()


def test_kafka_sink_routes_by_family_and_keys_by_host(settings) -> None:
    sink, producer = _kafka_sink(settings)
    records = _records(30)
    sink.write(RecordBatch(records))
    sink.close()
    assert producer.closed and sink.sent == sink.acked == 30
    topics = Counter(t for t, *_ in producer.sent)
    assert topics == {"fleet.errors": 20, "fleet.inventory": 10}
    codec = Codec()
    for (_topic, key, value, partition), record in zip(producer.sent, records, strict=True):
        assert key == record["host_id"].encode()
        assert codec.decode(value).record == record
        assert partition == (murmur2(key) & 0x7FFFFFFF) % 6  # the default partitioner's choice


def test_kafka_sink_fails_loudly_when_records_are_lost(settings) -> None:
    sink, producer = _kafka_sink(settings)
    producer.fail_every = 7
    sink.write(RecordBatch(_records(30)))
    with pytest.raises(DeliveryError) as err:
        sink.close()
    assert err.value.failed == 4 and err.value.sent == 30
    assert "KafkaTimeoutError" in str(err.value)


def test_kafka_sink_blocks_when_too_much_is_unacknowledged(settings) -> None:
    sink, producer = _kafka_sink(settings, max_buffered_bytes=1024 * 1024, max_block_ms=5000)
    producer.hold = True
    big = _records(3)
    for r in big:
        r["payload"] = {"gpu": 0, "xid": 79, "pci_bus_id": "x" * 400_000, "message": ""}
        r["event_type"] = "XidRaised"
    sink.write(RecordBatch(big))  # 1.2 MB now pending
    released = threading.Timer(0.3, producer.release)
    released.start()
    started = time.monotonic()
    sink.write(RecordBatch(_records(1)))  # must wait for the acks
    assert time.monotonic() - started >= 0.25 and sink.blocked_s > 0.2
    released.join()
    sink.close()


def test_kafka_sink_gives_up_when_the_broker_never_acknowledges(settings) -> None:
    sink, producer = _kafka_sink(settings, max_buffered_bytes=1024 * 1024, max_block_ms=1000)
    producer.hold = True
    big = [
        {
            **r,
            "event_type": "XidRaised",
            "payload": {"gpu": 0, "xid": 79, "pci_bus_id": "x" * 600_000, "message": ""},
        }
        for r in _records(2)
    ]
    sink.write(RecordBatch(big))
    with pytest.raises(SinkError, match="unacknowledged"):
        sink.write(RecordBatch(_records(1)))
