"""Publishing batches: exactly once across a crash between the file writes and the offset commit."""

from __future__ import annotations

from typing import Any

import polars as pl

from analytics.lake.batch import plan_batch
from analytics.lake.fs import LakeFS
from analytics.lake.layout import TopicPartition
from analytics.lake.manifest import read_frontier
from analytics.lake.quarantine import quarantine_entries
from analytics.lake.reader import Lake
from analytics.lake.reconcile import reconcile
from analytics.lake.synthetic import host_ids
from schemas import Codec
from tests.analytics.lake.helpers import as_consumed, garbage


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
