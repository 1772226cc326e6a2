"""Publishing batches: gates and quarantine, rejects, and exactly once across a crash between any two commits."""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pytest
from kafka import TopicPartition as KafkaTP

from analytics.errors import LakeIntegrityError
from analytics.lake import archiver as archiver_module
from analytics.lake import offsets
from analytics.lake.archiver import Archiver, ArchiveStats
from analytics.lake.batch import plan_batch
from analytics.lake.layout import (
    OFFSETS_TABLE,
    QUARANTINE_REPORTS,
    REJECTED_TABLE,
    TopicPartition,
    app_id,
    quarantine_table,
)
from analytics.lake.offsets import resume_offsets
from analytics.lake.publish import Publisher
from analytics.lake.reader import Lake
from analytics.lake.records import ConsumedRecord
from analytics.lake.synthetic import synthetic_records
from analytics.quality.gate import QualityGate
from analytics.tables import TABLES
from ground.delta import DeltaTables
from ground.settings import Settings
from ground.settings.lake import LakeSettings
from schemas import Codec
from tests.analytics.lake.helpers import (
    NOW,
    FakeConsumer,
    as_consumed,
    event_ids,
    frontier,
    garbage,
    lake_settings,
    next_offsets,
)

GROUP = LakeSettings().group_id


def test_publish_makes_every_record_readable_once(
    lake: DeltaTables, records: list[dict[str, Any]], publisher_factory
) -> None:  # type: ignore[no-untyped-def]
    consumed = as_consumed(records)
    done = publisher_factory().publish(plan_batch(consumed, Codec()))
    assert done.quarantined_rows == 0 and done.rejected_rows == 0 and done.replayed_rows == 0
    assert done.published_rows == len(records)
    ids = event_ids(lake)
    assert sorted(ids) == sorted(r["event_id"] for r in records)
    assert frontier(lake) == next_offsets(consumed)
    sampled = Lake(lake).scan("host_sampled").collect()
    assert str(sampled.schema["date"]) == "Date"
    assert sampled.get_column("gpus").list.len().min() == 8


def test_each_table_version_is_the_next_offset_of_the_partitions_it_holds(
    lake: DeltaTables, records: list[dict[str, Any]], publisher_factory
) -> None:  # type: ignore[no-untyped-def]
    consumed = [*as_consumed(records, partitions=4), garbage("fleet.errors", 3, 99)]
    publisher = publisher_factory()
    for batch in (consumed[:20], consumed[20:]):
        plan = plan_batch(batch, Codec())
        publisher.publish(plan)
        for table, rows in plan.tables.items():
            for tp in {tp for tp, _ in rows.sources}:
                assert lake.version_of(table, app_id(GROUP, tp)) == plan.ranges[tp].last + 1, (table, tp)
        assert resume_offsets(lake, GROUP, plan.ranges) == next_offsets(batch)
    ends = next_offsets(consumed)
    assert resume_offsets(lake, GROUP, ends) == ends
    errors = TopicPartition("fleet.errors", 3)
    assert lake.version_of(REJECTED_TABLE, app_id(GROUP, errors)) == ends[errors] == 100
    assert lake.version_of(OFFSETS_TABLE, app_id("another-group", errors)) is None


# -- exactly once across a crash ---------------------------------------------------------------------


class Crash(RuntimeError):
    """The process dies here (the test's stand-in for SIGKILL between two commits)."""


class CrashingTables(DeltaTables):
    """A lake that dies on its ``at``-th append, or on the first append to ``table``."""

    def __init__(self, root: str | Path, *, at: int | None = None, table: str | None = None) -> None:
        super().__init__(root)
        self.at, self.table = at, table
        self.appended: list[tuple[str, int]] = []  # (table, rows) of each append that committed

    def append(self, rel: str, data: pa.Table, **kwargs: Any) -> None:
        if len(self.appended) + 1 == self.at or rel == self.table:
            raise Crash(f"killed before appending {data.num_rows} rows to {rel}")
        super().append(rel, data, **kwargs)
        self.appended.append((rel, data.num_rows))


def stream(records: list[dict[str, Any]]) -> list[ConsumedRecord]:
    """``records`` as Kafka delivers them over 4 partitions, an undecodable record on fleet.errors[3] after the 9th."""
    first = as_consumed(records[:9], partitions=4)
    start = {(tp.topic, tp.partition): n for tp, n in next_offsets(first).items()}
    bad = garbage("fleet.errors", 3, start[("fleet.errors", 3)])
    start[("fleet.errors", 3)] += 1
    return [*first, bad, *as_consumed(records[9:], partitions=4, start=start)]


def after(consumed: list[ConsumedRecord], resume: dict[TopicPartition, int]) -> list[ConsumedRecord]:
    """What a restarted archiver reads again: every record at or past its partition's committed offset."""
    return [r for r in consumed if r.offset >= resume.get(r.tp, 0)]


def restart(root: Path, settings: LakeSettings, consumed: list[ConsumedRecord], **kwargs: Any) -> Publisher:
    """A new process on the same lake: fresh tables, the frontier from ``_offsets``, the known hosts from the lake."""
    tables = DeltaTables(root)
    tps = {r.tp for r in consumed}
    return Publisher(tables, settings, resume_offsets(tables, GROUP, tps), clock=lambda: NOW, **kwargs)


CRASHED_BATCH_APPENDS = 9  # 7 data tables, _rejected, _offsets


@pytest.mark.parametrize("replay", ["longer", "shorter"])
@pytest.mark.parametrize("crash_at", range(1, CRASHED_BATCH_APPENDS + 1))
def test_a_crash_between_any_two_commits_neither_loses_nor_doubles_a_row(
    tmp_path: Path, records: list[dict[str, Any]], crash_at: int, replay: str
) -> None:
    """Batch 2 dies before its ``crash_at``-th commit; the restart replays from ``_offsets``.

    ``longer``: one batch up to the end of the stream; ``shorter``: a batch that ends inside the crashed
    one (tables past its end must still skip their rows in the next batch), then the rest.
    """
    root = tmp_path / "lake"
    settings = lake_settings(quality={"enabled": False})
    consumed = stream(records)
    first, crashed = consumed[:9], consumed[9:28]
    Publisher(DeltaTables(root), settings, {}, clock=lambda: NOW).publish(plan_batch(first, Codec()))

    dying = CrashingTables(root, at=crash_at)
    publisher = Publisher(
        dying, settings, resume_offsets(dying, GROUP, {r.tp for r in first}), clock=lambda: NOW
    )
    plan = plan_batch(crashed, Codec())
    with pytest.raises(Crash):
        publisher.publish(plan)
    assert len(dying.appended) == crash_at - 1
    held = sum(n for rel, n in dying.appended if rel in TABLES)  # rows the crash left committed

    restarted = restart(root, settings, consumed)
    pending = after(consumed, restarted.frontier)
    assert pending == consumed[9:], "the crashed batch is read again"
    batches = [pending] if replay == "longer" else [pending[:8], pending[8:]]
    replayed = sum(restarted.publish(plan_batch(b, Codec())).replayed_rows for b in batches)

    ids = event_ids(restarted.tables)
    assert Counter(ids) == Counter(r["event_id"] for r in records), "every event exactly once"
    assert replayed == held
    rejected = Lake(restarted.tables).rejected().collect()
    assert rejected.get_column("offset").to_list() == [consumed[9].offset]
    assert resume_offsets(restarted.tables, GROUP, next_offsets(consumed)) == next_offsets(consumed)


@pytest.mark.parametrize("crash_on", ["ecc_error_observed", OFFSETS_TABLE])
def test_a_restart_from_resume_offsets_replays_only_what_is_missing(
    tmp_path: Path, records: list[dict[str, Any]], crash_on: str
) -> None:
    """Dying on the 2nd data table, or on the ``_offsets`` commit after every table was written."""
    root = tmp_path / "lake"
    settings = lake_settings(quality={"enabled": False})
    consumed = stream(records)
    dying = CrashingTables(root, table=crash_on)
    with pytest.raises(Crash):
        Publisher(dying, settings, {}, clock=lambda: NOW).publish(plan_batch(consumed, Codec()))
    assert dying.appended[0][0] == "host_inventoried"  # inventory first: its hosts are known to the gates
    assert resume_offsets(dying, GROUP, next_offsets(consumed)) == {}

    restarted = restart(root, settings, consumed)
    done = restarted.publish(plan_batch(after(consumed, restarted.frontier), Codec()))
    assert done.replayed_rows == sum(n for rel, n in dying.appended if rel in TABLES) > 0
    if crash_on == OFFSETS_TABLE:
        assert done.published_rows == 0 and done.rejected_rows == 0 and done.commits == 1
    assert Counter(event_ids(restarted.tables)) == Counter(r["event_id"] for r in records)
    assert Lake(restarted.tables).rejected().collect().height == 1
    assert frontier(restarted.tables) == next_offsets(consumed)


def _bad_ecc(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The inventory, and the ECC errors with a negative count in the first (fails the ecc suite)."""
    ecc = [r for r in records if r["event_type"] == "EccErrorObserved"]
    inventory = [r for r in records if r["event_type"] == "HostInventoried"]
    return inventory, [{**ecc[0], "payload": {**ecc[0]["payload"], "count": -3}}, *ecc[1:]]


def quarantined_ids(lake: DeltaTables, table: str) -> list[str]:
    held = Lake(lake).quarantined(table)
    return [] if held is None else held.collect().get_column("event_id").to_list()


@pytest.mark.parametrize(
    "crash_on", [quarantine_table("ecc_error_observed"), QUARANTINE_REPORTS, OFFSETS_TABLE]
)
def test_a_crash_inside_quarantine_keeps_rows_and_report_once(
    tmp_path: Path, records: list[dict[str, Any]], gate: QualityGate, crash_on: str
) -> None:
    """Dying before the quarantined rows, between them and their report, or after both.

    Whichever: each row quarantined once, and one report per slice naming the rows' batch id.
    """
    root = tmp_path / "lake"
    settings = lake_settings()
    inventory, bad = _bad_ecc(records)
    consumed = as_consumed(inventory + bad, partitions=4)
    dying = CrashingTables(root, table=crash_on)
    first = Publisher(dying, settings, {}, gate=gate, known_hosts=set(), clock=lambda: NOW)
    with pytest.raises(Crash):
        first.publish(plan_batch(consumed, Codec()))
    held = (quarantine_table("ecc_error_observed"), len(bad)) in dying.appended
    assert held == (crash_on != quarantine_table("ecc_error_observed"))

    known = Lake(DeltaTables(root)).known_hosts()
    assert known == {r["host_id"] for r in inventory}
    restarted = restart(root, settings, consumed, gate=gate, known_hosts=known)
    restarted.publish(plan_batch(after(consumed, restarted.frontier), Codec()))

    lake = restarted.tables
    assert Counter(quarantined_ids(lake, "ecc_error_observed")) == Counter(r["event_id"] for r in bad)
    assert Lake(lake).scan("ecc_error_observed").collect().height == 0
    assert Counter(event_ids(lake)) == Counter(r["event_id"] for r in inventory)
    entries = Lake(lake).quarantine()
    assert sum(e.rows for e in entries) == len(bad), entries
    assert len({(e.table, e.topic, e.partition) for e in entries}) == len(entries), "a slice reported twice"
    assert all(any("count" in f for f in e.failed_expectations) for e in entries)
    rows = Lake(lake).quarantined("ecc_error_observed")
    assert rows is not None
    assert set(rows.collect().get_column("batch_id")) == {e.batch_id for e in entries}
    assert frontier(lake) == next_offsets(consumed)


# -- quality gates, quarantine, rejects ----------------------------------------------------------------


def test_failing_batch_is_quarantined_with_its_report(
    lake: DeltaTables, records: list[dict[str, Any]], publisher_factory
) -> None:  # type: ignore[no-untyped-def]
    inventory, bad = _bad_ecc(records)
    done = publisher_factory(gated=True).publish(plan_batch(as_consumed(inventory + bad), Codec()))
    assert done.quarantined_rows == len(bad)
    assert Lake(lake).scan("ecc_error_observed").collect().height == 0
    assert Lake(lake).scan("host_inventoried").collect().height == len(inventory)
    entries = Lake(lake).quarantine()
    assert sum(e.rows for e in entries) == len(bad)
    assert {e.table for e in entries} == {"ecc_error_observed"}
    assert any("count" in f and "-3" in f for f in entries[0].failed_expectations)
    report = entries[0].report
    assert report["success"] is False and report["table"] == "ecc_error_observed"
    held = Lake(lake).quarantined("ecc_error_observed")
    assert held is not None
    rows = held.collect()
    assert rows.height == entries[0].rows
    assert set(rows.get_column("batch_id")) == {e.batch_id for e in entries}
    first = entries[0]
    assert first.batch_id == f"{first.topic}-p{first.partition}-o{first.first_offset}-{first.last_offset}"


def test_unknown_host_is_quarantined_unless_inventoried_in_the_same_batch(
    lake: DeltaTables,
    records: list[dict[str, Any]],
    publisher_factory,  # type: ignore[no-untyped-def]
) -> None:
    xids = [r for r in records if r["event_type"] == "XidRaised"]
    inventory = [r for r in records if r["event_type"] == "HostInventoried"]
    done = publisher_factory(gated=True).publish(plan_batch(as_consumed(xids), Codec()))
    assert done.quarantined_rows == len(xids)
    assert any("host_id" in f for e in Lake(lake).quarantine() for f in e.failed_expectations)

    start = {(tp.topic, tp.partition): n for tp, n in frontier(lake).items()}
    again = publisher_factory(frontier=frontier(lake), gated=True)
    done = again.publish(plan_batch(as_consumed(inventory + xids, start=start), Codec()))
    assert done.quarantined_rows == 0
    assert Lake(lake).scan("xid_raised").collect().height == len(xids)


def test_rejected_records_are_kept_with_reason(lake: DeltaTables, publisher_factory) -> None:  # type: ignore[no-untyped-def]
    done = publisher_factory().publish(
        plan_batch([garbage("fleet.errors", 2, 40), garbage("fleet.errors", 2, 41)], Codec())
    )
    assert done.rejected_rows == 2
    rejected = Lake(lake).rejected().collect()
    assert rejected.get_column("offset").to_list() == [40, 41]
    assert set(rejected.get_column("error_type")) == {"FramingError"}
    assert set(rejected.get_column("value")) == {b"\x07not avro"}
    assert all(rejected.get_column("reason"))
    assert frontier(lake)[TopicPartition("fleet.errors", 2)] == 42


def test_quality_off_publishes_everything(
    lake: DeltaTables, records: list[dict[str, Any]], publisher_factory
) -> None:  # type: ignore[no-untyped-def]
    xids = [{**r, "host_id": "ghost"} for r in records if r["event_type"] == "XidRaised"]
    done = publisher_factory(gated=False).publish(plan_batch(as_consumed(xids), Codec()))
    assert done.quarantined_rows == 0 and not done.outcomes
    assert Lake(lake).scan("xid_raised").collect().height == len(xids)


def test_already_archived_offsets_are_refused(
    lake: DeltaTables, records: list[dict[str, Any]], publisher_factory
) -> None:  # type: ignore[no-untyped-def]
    consumed = as_consumed(records[:10])
    publisher = publisher_factory()
    publisher.publish(plan_batch(consumed, Codec()))
    with pytest.raises(LakeIntegrityError, match="already archived"):
        publisher.publish(plan_batch(consumed[-1:], Codec()))
    restarted = publisher_factory(frontier=frontier(lake))  # the same from the committed offsets
    with pytest.raises(LakeIntegrityError, match="already archived"):
        restarted.publish(plan_batch(consumed[-1:], Codec()))
    assert len(event_ids(lake)) == 10


def _future_inventory(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The inventory of ``records`` from agents whose clock runs 1 h ahead (fails the gate's future check)."""
    ahead = int((NOW + dt.timedelta(hours=1)).timestamp() * 1000)
    return [{**r, "ts": ahead} for r in records if r["event_type"] == "HostInventoried"]


def test_hosts_of_a_quarantined_inventory_are_known(
    lake: DeltaTables, records: list[dict[str, Any]], publisher_factory
) -> None:  # type: ignore[no-untyped-def]
    inventory = _future_inventory(records)
    samples = [r for r in records if r["event_type"] == "HostSampled"]
    publisher = publisher_factory(gated=True)
    done = publisher.publish(plan_batch(as_consumed(inventory), Codec()))
    assert done.quarantined_rows == len(inventory) and done.published_rows == 0
    hosts = {r["host_id"] for r in inventory}
    assert hosts <= (publisher.known_hosts or set())
    assert Lake(lake).known_hosts() == hosts  # what a restarted archiver starts from

    start = {(tp.topic, tp.partition): n for tp, n in frontier(lake).items()}
    restarted = publisher_factory(frontier=frontier(lake), known_hosts=Lake(lake).known_hosts(), gated=True)
    done = restarted.publish(plan_batch(as_consumed(samples, start=start), Codec()))
    assert done.quarantined_rows == 0 and done.published_rows == len(samples)
    assert Lake(lake).scan("host_sampled").collect().height == len(samples)


def test_quarantined_inventory_in_the_same_batch_makes_its_hosts_known(
    lake: DeltaTables, records: list[dict[str, Any]], publisher_factory
) -> None:  # type: ignore[no-untyped-def]
    inventory = _future_inventory(records)
    xids = [r for r in records if r["event_type"] == "XidRaised"]
    done = publisher_factory(gated=True).publish(plan_batch(as_consumed(inventory + xids), Codec()))
    assert done.quarantined_rows == len(inventory)
    assert Lake(lake).scan("xid_raised").collect().height == len(xids)


def test_off_calendar_event_time_is_rejected_and_the_rest_published(
    lake: DeltaTables, records: list[dict[str, Any]], publisher_factory
) -> None:  # type: ignore[no-untyped-def]
    xids = [r for r in records if r["event_type"] == "XidRaised"]
    micro = {**xids[1], "ts": xids[1]["ts"] * 1000}  # microseconds sent as milliseconds
    consumed = as_consumed([xids[0], micro, *xids[2:]], partitions=1)
    done = publisher_factory(gated=False).publish(plan_batch(consumed, Codec()))
    assert done.rejected_rows == 1 and done.published_rows == len(xids) - 1
    rejected = Lake(lake).rejected().collect()
    assert rejected.get_column("error_type").to_list() == ["TimestampOutOfRange"]
    assert str(micro["ts"]) in rejected.get_column("reason").item()
    assert rejected.get_column("offset").to_list() == [consumed[1].offset]
    assert frontier(lake)[consumed[-1].tp] == consumed[-1].offset + 1  # the batch committed
    assert Lake(lake).scan("xid_raised").collect().height == len(xids) - 1


# -- the archiver shell: where partitions start, retention ---------------------------------------------


def test_latest_start_reads_the_inventory_topic_from_its_beginning(
    lake: DeltaTables, gate: QualityGate
) -> None:
    settings = Settings(lake=lake_settings(start_from="latest"))
    archiver = Archiver(settings, lake=lake, gate=gate, clock=lambda: NOW)
    inventory = settings.topics.inventory.name
    tps = [KafkaTP(topic, p) for topic in sorted(archiver.topics) for p in (0, 1)]
    consumer = FakeConsumer()
    archiver._start(consumer, tps)
    assert {tp: o for tp, o in consumer.seeks.items() if tp.topic == inventory} == {
        KafkaTP(inventory, 0): 5,
        KafkaTP(inventory, 1): 5,
    }
    assert {o for tp, o in consumer.seeks.items() if tp.topic != inventory} == {20}
    # the starting points are committed before any data: a restart resumes there, not at a newer `latest`
    assert resume_offsets(lake, GROUP, [TopicPartition(inventory, 1)]) == {TopicPartition(inventory, 1): 5}
    assert frontier(lake)[TopicPartition("fleet.samples", 0)] == 20


def test_start_offsets_keep_the_inventory_at_its_beginning() -> None:
    inv, samples = TopicPartition("fleet.inventory", 0), TopicPartition("fleet.samples", 0)
    begin, end = {inv: 3, samples: 4}, {inv: 30, samples: 40}
    assert offsets.start_offsets(begin, end, "latest", "fleet.inventory") == {inv: 3, samples: 40}
    assert offsets.start_offsets(begin, end, "earliest", "fleet.inventory") == begin
    assert offsets.start_offsets(begin, end, "latest", None) == end  # inventory not archived


def test_restarted_archiver_knows_the_hosts_of_quarantined_inventory(
    lake: DeltaTables, records: list[dict[str, Any]], publisher_factory, gate
) -> None:  # type: ignore[no-untyped-def]
    inventory = _future_inventory(records)
    publisher_factory(gated=True).publish(plan_batch(as_consumed(inventory), Codec()))
    archiver = Archiver(Settings(), lake=lake, gate=gate, clock=lambda: NOW)
    tps = [KafkaTP(tp.topic, tp.partition) for tp in frontier(lake)]
    publisher = archiver._start(FakeConsumer(), tps)
    assert publisher.known_hosts == {r["host_id"] for r in inventory}


def test_a_restarted_archiver_seeks_to_the_committed_offsets(
    lake: DeltaTables, records: list[dict[str, Any]], publisher_factory
) -> None:  # type: ignore[no-untyped-def]
    consumed = as_consumed(records)
    publisher_factory().publish(plan_batch(consumed, Codec()))
    archiver = Archiver(
        Settings(lake=lake_settings(quality={"enabled": False})), lake=lake, clock=lambda: NOW
    )
    tps = [KafkaTP(tp.topic, tp.partition) for tp in next_offsets(consumed)]
    consumer = FakeConsumer()
    publisher = archiver._start(consumer, tps)
    expected = {KafkaTP(tp.topic, tp.partition): max(n, 5) for tp, n in next_offsets(consumed).items()}
    assert consumer.seeks == expected
    assert publisher.frontier == next_offsets(consumed)


def test_lost_to_retention_names_the_skipped_offsets() -> None:
    a, b, c = (TopicPartition("fleet.errors", p) for p in range(3))
    assert offsets.lost_to_retention({a: 3, b: 5}, {a: 6, b: 5, c: 9}) == {a: (3, 5)}
    assert offsets.lost_to_retention({a: 3}, {a: 0}) == {}


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


def _archive_until_idle(lake: DeltaTables, consumer: ScriptedConsumer) -> None:
    archiver = Archiver(
        Settings(lake=lake_settings(quality={"enabled": False}, flush_records=3)),
        lake=lake,
        clock=lambda: NOW,
    )
    tps = [KafkaTP("fleet.errors", 0)]
    publisher = archiver._start(consumer, tps)
    archiver._loop(consumer, tps, publisher, ArchiveStats(), True, None, None, None, time.monotonic())


def _expiry_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage() for r in caplog.records if r.levelname == "WARNING" and "expired" in r.getMessage()
    ]


@pytest.mark.parametrize(("begin_after", "warned"), [(6, ["3-5"]), (7, ["3-5"]), (0, [])])
def test_offsets_expiring_while_running_are_warned_of(
    lake: DeltaTables, caplog: pytest.LogCaptureFixture, begin_after: int, warned: list[str]
) -> None:
    """Offsets 3-5 expire between two polls (7: 6 too, after it was fetched); 0: a compaction gap, nothing lost."""
    consumer = ScriptedConsumer(0, 9, [(0, _xids_at(0, 3)), (begin_after, _xids_at(6, 3))])
    with caplog.at_level(logging.WARNING, logger=archiver_module.__name__):
        _archive_until_idle(lake, consumer)
    assert frontier(lake)[TopicPartition("fleet.errors", 0)] == 9
    assert _expiry_warnings(caplog) == [
        f"fleet.errors[0]: offsets {r} expired from Kafka before they were archived" for r in warned
    ]


def test_offsets_expired_before_start_are_warned_of_once(
    lake: DeltaTables, publisher_factory, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    publisher_factory().publish(plan_batch(_xids_at(0, 3), Codec()))
    consumer = ScriptedConsumer(6, 9, [(6, _xids_at(6, 3))])
    with caplog.at_level(logging.WARNING, logger=archiver_module.__name__):
        _archive_until_idle(lake, consumer)
    assert frontier(lake)[TopicPartition("fleet.errors", 0)] == 9
    assert _expiry_warnings(caplog) == [
        "fleet.errors[0]: offsets 3-5 expired from Kafka before they were archived"
    ]
