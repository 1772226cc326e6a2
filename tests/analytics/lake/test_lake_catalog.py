"""Visibility rules: readers see committed archiver files, committed compactions and foreign files."""

from __future__ import annotations

import datetime as dt
from typing import Any

from analytics.lake import catalog
from analytics.lake.batch import plan_batch
from analytics.lake.catalog import CompactionRecord, merge_coverage, merge_ranges, visible
from analytics.lake.fs import LakeFS
from analytics.lake.layout import TopicPartition
from analytics.lake.quarantine import quarantine_folders
from schemas import Codec
from tests.analytics.lake.helpers import NOW, as_consumed

TP = TopicPartition("fleet.errors", 0)
D = "xid_raised/date=2025-01-01/"


def record(file: str, replaces: tuple[str, ...]) -> CompactionRecord:
    return CompactionRecord("xid_raised", "2025-01-01", file, replaces, {}, (), 0, 0, "")


def test_uncommitted_archiver_files_are_hidden() -> None:
    files = [D + "fleet.errors-p0-o0-9.parquet", D + "fleet.errors-p0-o10-19.parquet", D + "sim-0.parquet"]
    assert visible(files, {TP: 10}, []) == [files[0], files[2]]


def test_partitions_without_manifest_are_visible() -> None:
    files = [D + "fleet.errors-p7-o0-9.parquet"]
    assert visible(files, {TP: 10}, []) == files


def test_compaction_swaps_sources_for_output_only_when_committed() -> None:
    sources = (D + "fleet.errors-p0-o0-4.parquet", D + "fleet.errors-p0-o5-9.parquet")
    output = D + "compacted-00aa.parquet"
    files = [*sources, output]
    assert visible(files, {TP: 10}, []) == list(sources)  # output not committed yet
    assert visible(files, {TP: 10}, [record(output, sources)]) == [output]


def test_a_recompacted_output_is_hidden_by_the_newer_record() -> None:
    old = D + "compacted-0001.parquet"
    new = D + "compacted-0002.parquet"
    late = D + "fleet.errors-p0-o10-12.parquet"
    records = [record(old, (D + "a.parquet",)), record(new, (old, late))]
    assert visible([old, new, late], {TP: 13}, records) == [new]


def test_merge_ranges_and_coverage() -> None:
    assert merge_ranges([[10, 19], [0, 4], [5, 9], [30, 31]]) == [[0, 19], [30, 31]]
    merged = merge_coverage([{"t": {"1": [[0, 4]]}}, {"t": {"1": [[5, 6]], "0": [[3, 3]]}}])
    assert merged == {"t": {"0": [[3, 3]], "1": [[0, 6]]}}


def test_known_hosts_include_quarantined_inventory_but_not_uncommitted(
    lake: LakeFS, records: list[dict[str, Any]], publisher_factory
) -> None:  # type: ignore[no-untyped-def]
    ahead = int((NOW + dt.timedelta(hours=1)).timestamp() * 1000)
    inventory = [r for r in records if r["event_type"] == "HostInventoried"]
    good, future, crashed = inventory[:2], [{**inventory[2], "ts": ahead}], [{**inventory[3], "ts": ahead}]
    consumed = as_consumed(good + future + crashed, partitions=1)
    publisher = publisher_factory(gated=True)
    publisher.publish(plan_batch(consumed[:2], Codec()))
    publisher.publish(plan_batch(consumed[2:3], Codec()))  # quarantined, committed
    publisher.stage(plan_batch(consumed[3:], Codec()))  # quarantined, then a crash before the commit
    assert len(quarantine_folders(lake)) == 2
    assert catalog.known_hosts(lake) == {r["host_id"] for r in good + future}


def test_a_settled_record_no_longer_hides_its_source_paths() -> None:
    """Once the sources are deleted the record moves them to ``replaced``: a new file under such a name is seen."""
    source, output = D + "run1-000000.parquet", D + "compacted-00aa.parquet"
    settled = record(output, (source,)).settled()
    assert settled.replaces == () and settled.replaced == (source,)
    assert visible([source, output], {}, [settled]) == [source, output]


def test_compaction_records_round_trip_and_older_records_still_read() -> None:
    settled = record(D + "compacted-00aa.parquet", (D + "a.parquet",)).settled()
    assert CompactionRecord.from_json(settled.to_json()) == settled
    older = record(D + "compacted-00bb.parquet", (D + "b.parquet",)).to_json()
    del older["replaced"]  # written before the key existed
    assert CompactionRecord.from_json(older).replaced == ()
    assert CompactionRecord.from_json(older).replaces == (D + "b.parquet",)
