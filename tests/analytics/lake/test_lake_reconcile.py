"""Reconcile after a crash: delete what lies beyond the committed offsets, keep the rest, never guess."""

from __future__ import annotations

import pyarrow as pa
import pytest

from analytics.errors import LakeIntegrityError
from analytics.lake.fs import LakeFS
from analytics.lake.layout import ArchiveName, TopicPartition
from analytics.lake.manifest import commit, read_frontier
from analytics.lake.reconcile import reconcile, verdict

TP = TopicPartition("fleet.errors", 0)
TABLE = pa.table({"x": [1]})


@pytest.mark.parametrize(
    ("first", "last", "expected"), [(0, 9, "keep"), (10, 19, "delete"), (15, 15, "delete"), (9, 9, "keep")]
)
def test_verdict(first: int, last: int, expected: str) -> None:
    assert verdict(ArchiveName(TP.topic, TP.partition, first, last), {TP: 10}) == expected


def test_verdict_without_manifest_is_foreign() -> None:
    assert verdict(ArchiveName("other", 0, 5, 6), {TP: 10}) == "foreign"


def test_a_file_straddling_the_commit_is_an_integrity_error() -> None:
    with pytest.raises(LakeIntegrityError, match="straddles"):
        verdict(ArchiveName(TP.topic, TP.partition, 5, 14), {TP: 10})


def test_reconcile_deletes_uncommitted_files_and_temps_only(lake: LakeFS) -> None:
    commit(lake, TP, 10, previous=None)
    kept = "xid_raised/date=2025-01-01/fleet.errors-p0-o0-9.parquet"
    late = "xid_raised/date=2025-01-02/fleet.errors-p0-o10-12.parquet"
    foreign = "xid_raised/date=2025-01-01/part-0.parquet"
    other_tp = "xid_raised/date=2025-01-01/fleet.errors-p1-o50-60.parquet"  # partition 1 has no manifest
    rejected_late = "_rejected/fleet.errors/fleet.errors-p0-o11-11.parquet"
    quarantine_late = "_quarantine/xid_raised/fleet.errors-p0-o10-12/data.parquet"
    temp = "xid_raised/date=2025-01-02/.fleet.errors-p0-o13-14.parquet.0123abcd.tmp"
    for rel in (kept, late, foreign, other_tp, rejected_late, quarantine_late):
        lake.write_parquet(rel, TABLE)
    lake.write_bytes(temp, b"partial")
    lake.write_bytes("_quarantine/xid_raised/fleet.errors-p0-o10-12/report.json", b"{}")

    report = reconcile(lake, read_frontier(lake))

    assert set(report.deleted) == {
        late,
        rejected_late,
        quarantine_late,
        temp,
        "_quarantine/xid_raised/fleet.errors-p0-o10-12/report.json",
    }
    for rel in (kept, foreign, other_tp):
        assert lake.exists(rel)
    assert not lake.exists("xid_raised/date=2025-01-02")
    assert report.kept == 1


def test_reconcile_can_be_limited_to_owned_partitions(lake: LakeFS) -> None:
    commit(lake, TP, 0, previous=None)
    late = "xid_raised/date=2025-01-01/fleet.errors-p0-o0-3.parquet"
    lake.write_parquet(late, TABLE)
    assert reconcile(lake, read_frontier(lake), [TopicPartition("fleet.samples", 0)]).deleted == []
    assert lake.exists(late)
    assert reconcile(lake, read_frontier(lake), [TP]).deleted == [late]
