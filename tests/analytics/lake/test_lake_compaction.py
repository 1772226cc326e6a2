"""Compaction: fewer files, same events (duplicates dropped), offsets recorded, safe at every crash point."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa
import pytest

from analytics.errors import LakeIntegrityError
from analytics.lake.batch import plan_batch
from analytics.lake.catalog import published_files, read_compactions
from analytics.lake.compaction import compact, compact_unit, dedup_first, is_closed, plan_units, recover
from analytics.lake.fs import LakeFS
from analytics.lake.layout import compaction_record_path
from analytics.lake.reader import Lake
from analytics.lake.synthetic import synthetic_records
from ground.settings.lake import LakeSettings
from schemas import Codec
from schemas.arrow import to_table
from tests.analytics.lake.helpers import NOW, as_consumed

SETTINGS = LakeSettings()


def archive_in_batches(lake: LakeFS, publisher_factory, records: list[dict[str, Any]], batches: int) -> None:  # type: ignore[no-untyped-def]
    publisher = publisher_factory()
    consumed = as_consumed(records)
    size = -(-len(consumed) // batches)
    for i in range(0, len(consumed), size):
        publisher.publish(plan_batch(consumed[i : i + size], Codec()))


def table_ids(lake: LakeFS, table: str) -> list[str]:
    return sorted(Lake(lake).scan(table).select("event_id").collect().get_column("event_id").to_list())


@pytest.fixture
def many(lake: LakeFS, publisher_factory) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    records = synthetic_records(n_hosts=6, samples_per_host=6, span_ms=24 * 3_600_000)
    archive_in_batches(lake, publisher_factory, records, batches=6)
    return records


def test_compaction_merges_files_and_keeps_every_event(lake: LakeFS, many: list[dict[str, Any]]) -> None:
    before = {t: table_ids(lake, t) for t in Lake(lake).tables()}
    files_before = len(published_files(lake, "host_sampled"))
    results = compact(lake, SETTINGS, now=NOW)
    assert results, "six batches leave several files per partition"
    assert {t: table_ids(lake, t) for t in Lake(lake).tables()} == before
    assert len(published_files(lake, "host_sampled")) == 1 < files_before
    assert all(r.duplicates_dropped == 0 for r in results)
    # sources are gone from storage, not only hidden
    assert [f for f in lake.files("host_sampled")] == published_files(lake, "host_sampled")


def test_compaction_records_the_offsets_it_covers(lake: LakeFS, many: list[dict[str, Any]]) -> None:
    consumed = [c for c in as_consumed(many) if c.topic == "fleet.samples"]
    compact(lake, SETTINGS, now=NOW, tables=["host_sampled"])
    (record,) = read_compactions(lake, "host_sampled")
    expected: dict[str, list[list[int]]] = {}
    for c in consumed:
        expected.setdefault(str(c.partition), []).append([c.offset, c.offset])
    from analytics.lake.catalog import merge_ranges

    assert record.covers == {"fleet.samples": {p: merge_ranges(r) for p, r in sorted(expected.items())}}
    assert record.rows == len(consumed)


def test_duplicates_from_another_writer_are_dropped(lake: LakeFS, many: list[dict[str, Any]]) -> None:
    xids = [r for r in many if r["event_type"] == "XidRaised"]
    lake.write_parquet("xid_raised/date=2025-01-01/sim-0.parquet", to_table("XidRaised", xids[:2]))
    assert len(table_ids(lake, "xid_raised")) == len(xids) + 2
    (result,) = compact(lake, SETTINGS, now=NOW, tables=["xid_raised"])
    assert result.duplicates_dropped == 2
    ids = table_ids(lake, "xid_raised")
    assert ids == sorted(r["event_id"] for r in xids)
    (record,) = read_compactions(lake, "xid_raised")
    assert record.foreign_files == ("xid_raised/date=2025-01-01/sim-0.parquet",)


def test_open_partitions_wait_unless_asked(lake: LakeFS, many: list[dict[str, Any]]) -> None:
    today = dt.datetime(2025, 1, 1, 12, tzinfo=dt.UTC)  # the data's own day: still open
    assert compact(lake, SETTINGS, now=today) == []
    assert compact(lake, SETTINGS, now=today, all_dates=True)


def test_crash_before_commit_leaves_sources_and_is_undone(lake: LakeFS, many: list[dict[str, Any]]) -> None:
    before = table_ids(lake, "host_sampled")
    sources = published_files(lake, "host_sampled")
    tables = {rel: lake.read_parquet(rel) for rel in sources}
    compact_unit(lake, "host_sampled", "2025-01-01", sources, [], SETTINGS, NOW)
    # simulate a crash right after the output was renamed into place: drop the commit record, restore sources
    (record,) = read_compactions(lake, "host_sampled")
    lake.delete(compaction_record_path("host_sampled", "2025-01-01", record.file.rsplit("/", 1)[-1]))
    for rel, table in tables.items():
        lake.write_parquet(rel, table)
    assert published_files(lake, "host_sampled") == sources, "an uncommitted output is invisible"
    assert lake.exists(record.file)
    deleted = recover(lake, "host_sampled")
    assert deleted == [record.file]
    # after recovery the lake is what it was before the compaction began: same files, same events, once each
    assert not lake.exists(record.file)
    assert lake.files("host_sampled") == published_files(lake, "host_sampled") == sources
    assert read_compactions(lake, "host_sampled") == []
    after = table_ids(lake, "host_sampled")
    assert after == before and len(after) == len(set(after)) > 0


class Crash(Exception):
    """A process death, injected at one step of a compaction."""


def crash(*_: object) -> None:
    raise Crash


def test_crash_after_commit_hides_sources_and_recovery_deletes_them(
    lake: LakeFS, many: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    before = table_ids(lake, "host_sampled")
    sources = published_files(lake, "host_sampled")
    monkeypatch.setattr(lake, "delete", crash)  # the crash came before the sources were deleted
    with pytest.raises(Crash):
        compact_unit(lake, "host_sampled", "2025-01-01", sources, [], SETTINGS, NOW)
    monkeypatch.undo()
    assert all(lake.exists(rel) for rel in sources)
    assert table_ids(lake, "host_sampled") == before, "readers see the output only, never both"
    assert sorted(recover(lake, "host_sampled")) == sorted(sources)
    assert table_ids(lake, "host_sampled") == before


def test_recompaction_folds_late_files_into_the_output(
    lake: LakeFS, many: list[dict[str, Any]], publisher_factory
) -> None:  # type: ignore[no-untyped-def]
    compact(lake, SETTINGS, now=NOW, tables=["xid_raised"])
    late = synthetic_records(n_hosts=2, samples_per_host=0, span_ms=3_600_000, id_prefix="late")
    late_xids = [r for r in late if r["event_type"] == "XidRaised"]
    from analytics.lake.manifest import read_frontier

    start = {(tp.topic, tp.partition): n for tp, n in read_frontier(lake).items()}
    publisher_factory(frontier=read_frontier(lake)).publish(
        plan_batch(as_consumed(late_xids, start=start), Codec())
    )
    expected = sorted(table_ids(lake, "xid_raised"))
    assert len(published_files(lake, "xid_raised")) > 1
    (result,) = compact(lake, SETTINGS, now=NOW, tables=["xid_raised"])
    assert table_ids(lake, "xid_raised") == expected
    assert published_files(lake, "xid_raised") == [result.file]
    assert len(read_compactions(lake, "xid_raised")) == 1, "the superseded record is removed"


def test_a_lost_compaction_output_is_an_integrity_error(lake: LakeFS, many: list[dict[str, Any]]) -> None:
    (result,) = compact(lake, SETTINGS, now=NOW, tables=["xid_raised"])
    lake.delete(result.file)
    with pytest.raises(LakeIntegrityError, match="is gone"):
        recover(lake, "xid_raised")


def test_plan_units_and_helpers() -> None:
    files = [("a", 40), ("b", 40), ("c", 40), ("compacted-x.parquet", 90), ("d", 5)]
    assert plan_units(files, max_rows=100) == [["a", "b"], ["c", "d"]]
    assert plan_units([("a", 1)], max_rows=100) == []
    assert is_closed("2025-01-01", dt.date(2025, 1, 3), after_days=1)
    assert not is_closed("2025-01-02", dt.date(2025, 1, 3), after_days=1)
    table = pa.table({"event_id": ["b", "a", "b", "c"], "ts": [2, 1, 3, 0], "v": [1, 2, 3, 4]})
    deduped, dropped = dedup_first(table)
    assert dropped == 1
    assert deduped.to_pydict() == {"event_id": ["c", "a", "b"], "ts": [0, 1, 2], "v": [4, 2, 1]}


def test_recovery_leaves_the_archivers_temp_files_alone(lake: LakeFS, many: list[dict[str, Any]]) -> None:
    """A compaction must not delete a running archiver's half-written file (its rename would then fail)."""
    archiver_temp = "host_sampled/date=2025-01-01/.fleet.samples-p0-o0-3.parquet.abc123def456.tmp"
    own_temp = "host_sampled/date=2025-01-01/.compacted-0123456789abcdef.parquet.abc123def456.tmp"
    for rel in (archiver_temp, own_temp):
        lake.write_bytes(rel, b"partial")
    deleted = recover(lake, "host_sampled")
    assert own_temp in deleted and not lake.exists(own_temp)
    assert lake.exists(archiver_temp)


def test_a_second_compaction_is_refused_while_one_runs(lake: LakeFS, many: list[dict[str, Any]]) -> None:
    import os

    from analytics.errors import LakeError
    from analytics.lake.compaction import LOCK_PATH, compaction_lock

    before = table_ids(lake, "host_sampled")
    with compaction_lock(lake):
        with pytest.raises(LakeError, match="another compaction is running"):
            compact(lake, SETTINGS, now=NOW)
        assert table_ids(lake, "host_sampled") == before
    assert not lake.exists(LOCK_PATH)
    lake.write_json(LOCK_PATH, {"pid": os.getpid(), "host": "elsewhere", "since": "x"})
    with pytest.raises(LakeError, match=r"pid \d+ on elsewhere"):
        compact(lake, SETTINGS, now=NOW)


def test_a_lock_left_by_a_dead_compaction_on_this_host_is_taken_over(
    lake: LakeFS, many: list[dict[str, Any]]
) -> None:
    import socket
    import subprocess
    import sys

    from analytics.lake.compaction import LOCK_PATH

    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    lake.write_json(LOCK_PATH, {"pid": int(gone.stdout), "host": socket.gethostname(), "since": "x"})
    assert compact(lake, SETTINGS, now=NOW)
    assert not lake.exists(LOCK_PATH)


def test_overlapping_compactions_never_delete_data(
    lake: LakeFS, many: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the lock cannot exclude (an object store), the output is checked before the sources go."""
    before = table_ids(lake, "host_sampled")
    sources = published_files(lake, "host_sampled")
    write_json = lake.write_json

    def other_compaction_recovers_first(rel: str, obj: Any) -> None:
        recover(lake, "host_sampled")  # sees this unit's output, not yet committed: deletes it
        write_json(rel, obj)

    monkeypatch.setattr(lake, "write_json", other_compaction_recovers_first)
    with pytest.raises(LakeIntegrityError, match="vanished"):
        compact_unit(lake, "host_sampled", "2025-01-01", sources, [], SETTINGS, NOW)
    monkeypatch.undo()
    assert read_compactions(lake, "host_sampled") == []
    assert table_ids(lake, "host_sampled") == before


def test_crash_before_the_record_is_settled_is_finished_by_recovery(
    lake: LakeFS, many: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sources deleted, record still naming them in ``replaces``: recovery empties it, deleting nothing."""
    from analytics.lake import compaction

    before = table_ids(lake, "host_sampled")
    sources = published_files(lake, "host_sampled")
    monkeypatch.setattr(compaction, "settle", crash)
    with pytest.raises(Crash):
        compact_unit(lake, "host_sampled", "2025-01-01", sources, [], SETTINGS, NOW)
    monkeypatch.undo()
    (record,) = read_compactions(lake, "host_sampled")
    assert record.replaces == tuple(sources) and not any(lake.exists(rel) for rel in sources)
    assert recover(lake, "host_sampled") == []
    (record,) = read_compactions(lake, "host_sampled")
    assert record.replaces == () and record.replaced == tuple(sources)
    assert table_ids(lake, "host_sampled") == before


SIM = "xid_raised/date=2025-01-01/run1-{:06d}.parquet"  # the simulator's Parquet sink: no offsets in the name


def sim_events(prefix: str, n: int) -> pa.Table:
    """``n`` XidRaised events with event_ids starting ``prefix``, as the simulator's sink writes them."""
    records = synthetic_records(n_hosts=2 * n, samples_per_host=0, id_prefix=prefix)
    return to_table("XidRaised", [r for r in records if r["event_type"] == "XidRaised"][:n])


def test_a_file_rewritten_under_a_compacted_name_is_visible_and_kept(lake: LakeFS) -> None:
    """A simulator re-run writes new events under an old name: the old record neither hides nor deletes them."""
    lake.write_parquet(SIM.format(0), sim_events("a", 5))
    lake.write_parquet(SIM.format(1), sim_events("b", 4))
    compact(lake, SETTINGS, now=NOW, tables=["xid_raised"])
    lake.write_parquet(SIM.format(0), sim_events("c", 3))  # the re-run
    expected = table_ids(lake, "xid_raised")
    assert len(expected) == 12
    assert recover(lake, "xid_raised") == [] and lake.exists(SIM.format(0))
    compact(lake, SETTINGS, now=NOW, tables=["xid_raised"])
    assert table_ids(lake, "xid_raised") == expected
    (record,) = read_compactions(lake, "xid_raised")
    assert record.replaces == () and SIM.format(0) in record.replaced  # kept for audit


def test_a_unit_with_the_sources_of_a_committed_output_gets_a_new_name(lake: LakeFS) -> None:
    """Rewritten sources grouped again must not overwrite the output they were first compacted into."""
    lake.write_parquet(SIM.format(0), sim_events("a", 5))
    lake.write_parquet(SIM.format(1), sim_events("b", 4))
    (first,) = compact(lake, SETTINGS, now=NOW, tables=["xid_raised"], max_rows=16)
    lake.write_parquet(SIM.format(0), sim_events("c", 3))
    lake.write_parquet(SIM.format(1), sim_events("d", 3))
    expected = table_ids(lake, "xid_raised")
    (second,) = compact(lake, SETTINGS, now=NOW, tables=["xid_raised"], max_rows=16)  # 9 rows ≥ 16 // 2: kept
    assert second.file != first.file
    assert published_files(lake, "xid_raised") == sorted([first.file, second.file])
    assert table_ids(lake, "xid_raised") == expected and len(expected) == 15
