"""Publishing batches: exactly once across a crash between the file writes and the offset commit."""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

import polars as pl
import pytest

from analytics.lake import archiver as archiver_module
from analytics.lake import catalog
from analytics.lake.archiver import Archiver, ArchiveStats
from analytics.lake.batch import plan_batch
from analytics.lake.fs import LakeFS
from analytics.lake.layout import TopicPartition
from analytics.lake.manifest import read_frontier
from analytics.lake.quarantine import quarantine_entries
from analytics.lake.reader import Lake
from analytics.lake.reconcile import reconcile
from analytics.lake.synthetic import host_ids, synthetic_records
from ground.settings import Settings
from schemas import Codec
from tests.analytics.lake.helpers import NOW, as_consumed, garbage, lake_settings


def all_event_ids(lake: LakeFS) -> list[str]:
    reader = Lake(lake)
    ids: list[str] = []
    for table in reader.tables():
        ids += reader.scan(table).select("event_id").collect().get_column("event_id").to_list()
    return ids


def test_publish_makes_every_record_readable_once(
    lake: LakeFS, records: list[dict[str, Any]], publisher_factory
) -> None:  # type: ignore[no-untyped-def]
    consumed = as_consumed(records)
    staged = publisher_factory().publish(plan_batch(consumed, Codec()))
    assert staged.quarantined_rows == 0 and staged.rejected_rows == 0
    ids = all_event_ids(lake)
    assert sorted(ids) == sorted(r["event_id"] for r in records)
    frontier = read_frontier(lake)
    for rec in consumed:
        assert frontier[rec.tp] > rec.offset
    sampled = Lake(lake).scan("host_sampled").collect()
    assert sampled.schema["date"] == pl.Date
    assert sampled.get_column("gpus").list.len().min() == 8


def test_crash_between_files_and_commit_is_invisible_then_reconciled(
    lake: LakeFS,
    records: list[dict[str, Any]],
    publisher_factory,  # type: ignore[no-untyped-def]
) -> None:
    consumed = as_consumed(records)
    first, second = consumed[: len(consumed) // 2], consumed[len(consumed) // 2 :]
    publisher = publisher_factory()
    publisher.publish(plan_batch(first, Codec()))
    committed_ids = sorted(all_event_ids(lake))

    staged = publisher.stage(plan_batch(second, Codec()))  # files written … then the process dies
    assert sum(len(f) for f in staged.files.values()) > 0
    assert sorted(all_event_ids(lake)) == committed_ids, "uncommitted files must not be visible"

    report = reconcile(lake, read_frontier(lake))
    assert sorted(report.deleted) == sorted(f for files in staged.files.values() for f in files)

    # the restarted archiver re-reads the same offsets and publishes them again
    restarted = publisher_factory(frontier=read_frontier(lake), known_hosts=set(host_ids(4)))
    restarted.publish(plan_batch(second, Codec()))
    ids = all_event_ids(lake)
    assert len(ids) == len(set(ids)) == len(records)


def test_failing_batch_is_quarantined_with_its_report(
    lake: LakeFS, records: list[dict[str, Any]], publisher_factory
) -> None:  # type: ignore[no-untyped-def]
    ecc = [r for r in records if r["event_type"] == "EccErrorObserved"]
    bad = [{**ecc[0], "payload": {**ecc[0]["payload"], "count": -3}}, *ecc[1:]]
    inventory = [r for r in records if r["event_type"] == "HostInventoried"]
    staged = publisher_factory(gated=True).publish(plan_batch(as_consumed(inventory + bad), Codec()))
    assert staged.quarantined_rows == len(bad)
    assert Lake(lake).scan("ecc_error_observed").collect().height == 0
    assert Lake(lake).scan("host_inventoried").collect().height == len(inventory)
    entries = quarantine_entries(lake)
    assert sum(e.rows for e in entries) == len(bad)
    assert {e.table for e in entries} == {"ecc_error_observed"}
    assert any("count" in f and "-3" in f for f in entries[0].failed_expectations)
    report = lake.read_json(entries[0].report_path)
    assert report["success"] is False and report["table"] == "ecc_error_observed"
    assert lake.read_parquet(entries[0].data_path).num_rows == entries[0].rows


def test_unknown_host_is_quarantined_unless_inventoried_in_the_same_batch(
    lake: LakeFS,
    records: list[dict[str, Any]],
    publisher_factory,  # type: ignore[no-untyped-def]
) -> None:
    xids = [r for r in records if r["event_type"] == "XidRaised"]
    inventory = [r for r in records if r["event_type"] == "HostInventoried"]
    staged = publisher_factory(gated=True).publish(plan_batch(as_consumed(xids), Codec()))
    assert staged.quarantined_rows == len(xids)
    assert any("host_id" in f for e in quarantine_entries(lake) for f in e.failed_expectations)

    start = {(tp.topic, tp.partition): n for tp, n in read_frontier(lake).items()}
    again = publisher_factory(frontier=read_frontier(lake), gated=True)
    staged = again.publish(plan_batch(as_consumed(inventory + xids, start=start), Codec()))
    assert staged.quarantined_rows == 0
    assert Lake(lake).scan("xid_raised").collect().height == len(xids)


def test_rejected_records_are_kept_with_reason(lake: LakeFS, publisher_factory) -> None:  # type: ignore[no-untyped-def]
    publisher_factory().publish(
        plan_batch([garbage("fleet.errors", 2, 40), garbage("fleet.errors", 2, 41)], Codec())
    )
    rejected = Lake(lake).rejected().collect()
    assert rejected.get_column("offset").to_list() == [40, 41]
    assert set(rejected.get_column("error_type")) == {"FramingError"}
    assert read_frontier(lake)[TopicPartition("fleet.errors", 2)] == 42


def test_quality_off_publishes_everything(
    lake: LakeFS, records: list[dict[str, Any]], publisher_factory
) -> None:  # type: ignore[no-untyped-def]
    xids = [{**r, "host_id": "ghost"} for r in records if r["event_type"] == "XidRaised"]
    staged = publisher_factory(gated=False).publish(plan_batch(as_consumed(xids), Codec()))
    assert staged.quarantined_rows == 0 and not staged.outcomes
    assert Lake(lake).scan("xid_raised").collect().height == len(xids)


def test_already_archived_offsets_are_refused(
    lake: LakeFS, records: list[dict[str, Any]], publisher_factory
) -> None:  # type: ignore[no-untyped-def]
    import pytest

    from analytics.errors import LakeIntegrityError

    consumed = as_consumed(records[:10])
    publisher = publisher_factory()
    publisher.publish(plan_batch(consumed, Codec()))
    with pytest.raises(LakeIntegrityError, match="already archived"):
        publisher.publish(plan_batch(consumed[-1:], Codec()))
    assert len(all_event_ids(lake)) == 10


def _future_inventory(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The inventory of ``records`` from agents whose clock runs 1 h ahead (fails the gate's future check)."""
    ahead = int((NOW + dt.timedelta(hours=1)).timestamp() * 1000)
    return [{**r, "ts": ahead} for r in records if r["event_type"] == "HostInventoried"]


def test_hosts_of_a_quarantined_inventory_are_known(
    lake: LakeFS, records: list[dict[str, Any]], publisher_factory
) -> None:  # type: ignore[no-untyped-def]
    inventory = _future_inventory(records)
    samples = [r for r in records if r["event_type"] == "HostSampled"]
    publisher = publisher_factory(gated=True)
    staged = publisher.publish(plan_batch(as_consumed(inventory), Codec()))
    assert staged.quarantined_rows == len(inventory) and staged.published_rows == 0
    hosts = {r["host_id"] for r in inventory}
    assert hosts <= (publisher.known_hosts or set())
    assert catalog.known_hosts(lake) == hosts  # what a restarted archiver starts from

    start = {(tp.topic, tp.partition): n for tp, n in read_frontier(lake).items()}
    restarted = publisher_factory(
        frontier=read_frontier(lake), known_hosts=catalog.known_hosts(lake), gated=True
    )
    staged = restarted.publish(plan_batch(as_consumed(samples, start=start), Codec()))
    assert staged.quarantined_rows == 0 and staged.published_rows == len(samples)
    assert Lake(lake).scan("host_sampled").collect().height == len(samples)


def test_quarantined_inventory_in_the_same_batch_makes_its_hosts_known(
    lake: LakeFS, records: list[dict[str, Any]], publisher_factory
) -> None:  # type: ignore[no-untyped-def]
    inventory = _future_inventory(records)
    xids = [r for r in records if r["event_type"] == "XidRaised"]
    staged = publisher_factory(gated=True).publish(plan_batch(as_consumed(inventory + xids), Codec()))
    assert staged.quarantined_rows == len(inventory)
    assert Lake(lake).scan("xid_raised").collect().height == len(xids)


def test_off_calendar_event_time_is_rejected_and_the_rest_published(
    lake: LakeFS, records: list[dict[str, Any]], publisher_factory
) -> None:  # type: ignore[no-untyped-def]
    xids = [r for r in records if r["event_type"] == "XidRaised"]
    micro = {**xids[1], "ts": xids[1]["ts"] * 1000}  # microseconds sent as milliseconds
    consumed = as_consumed([xids[0], micro, *xids[2:]], partitions=1)
    staged = publisher_factory(gated=False).publish(plan_batch(consumed, Codec()))
    assert staged.rejected_rows == 1 and staged.published_rows == len(xids) - 1
    rejected = Lake(lake).rejected().collect()
    assert rejected.get_column("error_type").to_list() == ["TimestampOutOfRange"]
    assert str(micro["ts"]) in rejected.get_column("reason").item()
    assert rejected.get_column("offset").to_list() == [consumed[1].offset]
    assert read_frontier(lake)[consumed[-1].tp] == consumed[-1].offset + 1  # the batch committed
    assert Lake(lake).scan("xid_raised").collect().height == len(xids) - 1


class FakeConsumer:
    """The part of a KafkaConsumer that ``Archiver._start`` uses, every partition holding offsets 5-19."""

    def __init__(self) -> None:
        self.seeks: dict[Any, int] = {}

    def beginning_offsets(self, tps: list[Any]) -> dict[Any, int]:
        return {tp: 5 for tp in tps}

    def end_offsets(self, tps: list[Any]) -> dict[Any, int]:
        return {tp: 20 for tp in tps}

    def seek(self, tp: Any, offset: int) -> None:
        self.seeks[tp] = offset

    def commit(self, offsets: Any) -> None:
        pass


def test_latest_start_reads_the_inventory_topic_from_its_beginning(lake: LakeFS, gate) -> None:  # type: ignore[no-untyped-def]
    from kafka import TopicPartition as KafkaTP

    settings = Settings(lake=lake_settings(start_from="latest"))
    archiver = Archiver(settings, lake=lake, gate=gate, clock=lambda: NOW)
    inventory = settings.topics.inventory.name
    tps = [KafkaTP(topic, p) for topic in sorted(archiver.topics) for p in (0, 1)]
    consumer = FakeConsumer()
    archiver._start(consumer, tps, ArchiveStats())
    assert {tp: o for tp, o in consumer.seeks.items() if tp.topic == inventory} == {
        KafkaTP(inventory, 0): 5,
        KafkaTP(inventory, 1): 5,
    }
    assert {o for tp, o in consumer.seeks.items() if tp.topic != inventory} == {20}
    assert read_frontier(lake)[TopicPartition(inventory, 1)] == 5


def test_start_offsets_keep_the_inventory_at_its_beginning() -> None:
    inv, samples = TopicPartition("fleet.inventory", 0), TopicPartition("fleet.samples", 0)
    begin, end = {inv: 3, samples: 4}, {inv: 30, samples: 40}
    assert archiver_module.start_offsets(begin, end, "latest", "fleet.inventory") == {inv: 3, samples: 40}
    assert archiver_module.start_offsets(begin, end, "earliest", "fleet.inventory") == begin
    assert archiver_module.start_offsets(begin, end, "latest", None) == end  # inventory not archived


def test_restarted_archiver_knows_the_hosts_of_quarantined_inventory(
    lake: LakeFS, records: list[dict[str, Any]], publisher_factory, gate
) -> None:  # type: ignore[no-untyped-def]
    from kafka import TopicPartition as KafkaTP

    inventory = _future_inventory(records)
    publisher_factory(gated=True).publish(plan_batch(as_consumed(inventory), Codec()))
    archiver = Archiver(Settings(), lake=lake, gate=gate, clock=lambda: NOW)
    tps = [KafkaTP(tp.topic, tp.partition) for tp in read_frontier(lake)]
    publisher = archiver._start(FakeConsumer(), tps, ArchiveStats())
    assert publisher.known_hosts == {r["host_id"] for r in inventory}


def test_lost_to_retention_names_the_skipped_offsets() -> None:
    a, b, c = (TopicPartition("fleet.errors", p) for p in range(3))
    assert archiver_module.lost_to_retention({a: 3, b: 5}, {a: 6, b: 5, c: 9}) == {a: (3, 5)}
    assert archiver_module.lost_to_retention({a: 3}, {a: 0}) == {}


class ScriptedConsumer(FakeConsumer):
    """A FakeConsumer that polls: each poll first moves Kafka's beginning offset, then hands out its records."""

    def __init__(self, begin: int, end: int, polls: list[tuple[int, list[Any]]]) -> None:
        super().__init__()
        self.begin, self.end, self.polls = begin, end, polls

    def beginning_offsets(self, tps: list[Any]) -> dict[Any, int]:
        return {tp: self.begin for tp in tps}

    def end_offsets(self, tps: list[Any]) -> dict[Any, int]:
        return {tp: self.end for tp in tps}

    def position(self, tp: Any) -> int:
        return self.seeks[tp]

    def poll(self, timeout_ms: int = 0, max_records: int | None = None) -> dict[Any, list[Any]]:
        from types import SimpleNamespace

        from kafka import TopicPartition as KafkaTP

        if not self.polls:
            return {}
        self.begin, records = self.polls.pop(0)
        out: dict[Any, list[Any]] = {}
        for r in records:
            tp = KafkaTP(r.topic, r.partition)
            out.setdefault(tp, []).append(SimpleNamespace(**r._asdict(), timestamp=r.timestamp_ms))
            self.seeks[tp] = r.offset + 1
        return out


def _xids_at(first: int, n: int) -> list[Any]:
    """``n`` XidRaised records consumed from fleet.errors[0] at offsets ``first``…"""
    records = synthetic_records(n_hosts=12, samples_per_host=0)
    xids = [r for r in records if r["event_type"] == "XidRaised"][first : first + n]
    return as_consumed(xids, partitions=1, start={("fleet.errors", 0): first})


def _archive_until_idle(lake: LakeFS, consumer: ScriptedConsumer) -> None:
    import time

    from kafka import TopicPartition as KafkaTP

    archiver = Archiver(
        Settings(lake=lake_settings(quality={"enabled": False}, flush_records=3)),
        lake=lake,
        clock=lambda: NOW,
    )
    tps = [KafkaTP("fleet.errors", 0)]
    publisher = archiver._start(consumer, tps, ArchiveStats())
    archiver._loop(consumer, tps, publisher, ArchiveStats(), True, None, None, None, time.monotonic())


def _expiry_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage() for r in caplog.records if r.levelname == "WARNING" and "expired" in r.getMessage()
    ]


@pytest.mark.parametrize(("begin_after", "warned"), [(6, ["3-5"]), (7, ["3-5"]), (0, [])])
def test_offsets_expiring_while_running_are_warned_of(
    lake: LakeFS, caplog: pytest.LogCaptureFixture, begin_after: int, warned: list[str]
) -> None:
    """Offsets 3-5 expire between two polls (7: 6 too, after it was fetched); 0: a compaction gap, nothing lost."""
    consumer = ScriptedConsumer(0, 9, [(0, _xids_at(0, 3)), (begin_after, _xids_at(6, 3))])
    with caplog.at_level(logging.WARNING, logger=archiver_module.__name__):
        _archive_until_idle(lake, consumer)
    assert read_frontier(lake)[TopicPartition("fleet.errors", 0)] == 9
    assert _expiry_warnings(caplog) == [
        f"fleet.errors[0]: offsets {r} expired from Kafka before they were archived" for r in warned
    ]


def test_offsets_expired_before_start_are_warned_of_once(
    lake: LakeFS, publisher_factory, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    publisher_factory().publish(plan_batch(_xids_at(0, 3), Codec()))
    consumer = ScriptedConsumer(6, 9, [(6, _xids_at(6, 3))])
    with caplog.at_level(logging.WARNING, logger=archiver_module.__name__):
        _archive_until_idle(lake, consumer)
    assert read_frontier(lake)[TopicPartition("fleet.errors", 0)] == 9
    assert _expiry_warnings(caplog) == [
        "fleet.errors[0]: offsets 3-5 expired from Kafka before they were archived"
    ]
