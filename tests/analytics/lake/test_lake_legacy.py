"""A lake in the pre-Delta layout is refused with one line saying how to convert; ``convert`` copies what it published."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from analytics.errors import LakeError
from analytics.lake import legacy
from analytics.lake.quarantine import quarantine_entries, quarantined
from analytics.lake.reader import Lake, scan
from analytics.lake.records import REJECTED_SCHEMA
from ground.delta import DeltaTables
from schemas.arrow import to_table
from tests.analytics.lake import duck
from tests.analytics.lake.helpers import ids_of


def write(root: Path, rel: str, records: list[dict[str, Any]], drop: tuple[str, ...] = ()) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(to_table(records[0]["event_type"], records).drop_columns(list(drop)), path)


def write_json(root: Path, rel: str, data: dict[str, Any]) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def old_lake(root: Path, records: list[dict[str, Any]]) -> dict[str, set[str]]:
    """A pre-Delta lake as the old archiver, compaction and simulator left it; the event ids it published."""
    xids = [r for r in records if r["event_type"] == "XidRaised"]  # 4
    ecc = [r for r in records if r["event_type"] == "EccErrorObserved"]  # 4
    samples = [r for r in records if r["event_type"] == "HostSampled"]  # 12
    x, e = "xid_raised/date=2025-01-01", "ecc_error_observed/date=2025-01-02"
    write_json(
        root,
        "_manifest/offsets/fleet.errors/0.json",
        {"topic": "fleet.errors", "partition": 0, "next_offset": 10},
    )
    # committed, written with an older event schema (no message)
    write(root, f"{x}/fleet.errors-p0-o0-9.parquet", xids[:2], drop=("message",))
    write(root, f"{x}/fleet.errors-p0-o10-19.parquet", xids[2:3])  # at the committed offset: never published
    write(root, f"{x}/fleet.errors-p0-o12-12.parquet", xids[3:])  # after it
    write(root, f"{e}/compacted-aa.parquet", ecc[:2])  # committed compaction …
    write(root, f"{e}/fleet.errors-p0-o3-4.parquet", ecc[:2])  # … whose source a crash left behind
    write_json(
        root,
        "_manifest/compactions/ecc_error_observed/date=2025-01-02/compacted-aa.json",
        {
            "table": "ecc_error_observed",
            "date": "2025-01-02",
            "file": f"{e}/compacted-aa.parquet",
            "replaces": [f"{e}/fleet.errors-p0-o3-4.parquet"],
            "covers": {},
            "rows": 2,
        },
    )
    write(root, f"{e}/compacted-bb.parquet", ecc[2:3])  # an output without its record: not committed
    write(root, f"{e}/part-00000.parquet", ecc[3:])  # another writer's file (the old simulator sink)
    # a partition without a manifest: visible
    write(root, "host_sampled/date=2025-01-01/fleet.samples-p1-o0-11.parquet", samples)
    (root / "host_sampled/date=2025-01-01/.fleet.samples-p1-o12-13.parquet.x.tmp").write_bytes(b"partial")
    return {
        "xid_raised": {r["event_id"] for r in xids[:2]},
        "ecc_error_observed": {r["event_id"] for r in (ecc[0], ecc[1], ecc[3])},
        "host_sampled": {r["event_id"] for r in samples},
    }


def test_an_old_lake_is_refused_in_one_line(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    with_manifest = tmp_path / "a"
    (with_manifest / "_manifest").mkdir(parents=True)
    only_files = tmp_path / "b"
    write(
        only_files,
        "xid_raised/date=2025-01-01/x.parquet",
        [r for r in records if r["event_type"] == "XidRaised"],
    )
    for old in (with_manifest, only_files):
        assert legacy.is_legacy(old)
        with pytest.raises(LakeError) as raised:
            Lake(old)
        message = str(raised.value)
        assert "\n" not in message and f"fleetpulse lake convert {old} NEW_PATH" in message
        with pytest.raises(LakeError, match="pre-Delta"):
            scan(old, "xid_raised")


def test_a_delta_lake_or_an_empty_folder_is_not_refused(
    tmp_path: Path, lake: DeltaTables, records: list[dict[str, Any]]
) -> None:
    old_lake(tmp_path / "old", records)
    legacy.convert(tmp_path / "old", lake)
    killed = tmp_path / "killed"  # a Delta writer killed before its first commit: data files, no log yet
    write(killed, "xid_raised/date=2025-01-01/part-00000-0b3c-c000.zstd.parquet",
          [r for r in records if r["event_type"] == "XidRaised"])  # fmt: skip
    for root in (lake.uri(), tmp_path / "empty", "s3://bucket/lake", killed):
        assert not legacy.is_legacy(root)
        legacy.refuse(root)
    assert Lake(lake).tables() == ["ecc_error_observed", "host_sampled", "xid_raised"]


def test_convert_copies_exactly_the_published_rows(
    tmp_path: Path, lake: DeltaTables, records: list[dict[str, Any]]
) -> None:
    old = tmp_path / "old"
    published = old_lake(old, records)
    before = sorted(p.relative_to(old).as_posix() for p in old.rglob("*"))
    seen: list[tuple[str, int]] = []
    rows = legacy.convert(old, lake, on_table=lambda t, n: seen.append((t, n)))
    assert rows == {t: len(ids) for t, ids in published.items()} and sorted(seen) == sorted(rows.items())
    for table, ids in published.items():
        assert ids_of(lake, table) == sorted(ids), table
    xids = Lake(lake).scan("xid_raised").collect()
    assert xids.get_column("message").null_count() == xids.height  # the older schema reads as nulls
    assert sorted(p.relative_to(old).as_posix() for p in old.rglob("*")) == before, (
        "the old lake is left as it was"
    )
    con = duck.connect()  # the converted lake is a Delta lake like any other
    for table in rows:
        assert duck.scan_ids(con, lake.uri(table))[0] == rows[table]


def test_convert_refuses_a_delta_lake_and_a_non_empty_target(
    tmp_path: Path, lake: DeltaTables, records: list[dict[str, Any]]
) -> None:
    old = tmp_path / "old"
    old_lake(old, records)
    legacy.convert(old, lake)
    with pytest.raises(LakeError, match="already holds Delta tables"):
        legacy.convert(old, lake)
    with pytest.raises(LakeError, match="not a lake in the pre-Delta layout"):
        legacy.convert(lake.uri(), DeltaTables(tmp_path / "other"))


def test_convert_refuses_to_write_into_the_old_lake(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    """Delta tables in the old folders would mix with the old files, which a vacuum then deletes."""
    old = tmp_path / "old"
    old_lake(old, records)
    before = sorted(p.relative_to(old).as_posix() for p in old.rglob("*"))
    for target in (old, tmp_path / "." / "old"):
        with pytest.raises(LakeError, match="into a new, empty path"):
            legacy.convert(old, DeltaTables(target))
    assert sorted(p.relative_to(old).as_posix() for p in old.rglob("*")) == before


OLD_REJECTED = pa.schema([f.with_type(pa.timestamp("ms", tz="UTC")) if f.name == "rejected_at" else f
                          for f in REJECTED_SCHEMA])  # fmt: skip


def old_side_records(root: Path, records: list[dict[str, Any]]) -> None:
    """The old quarantine and reject folders: one entry of each published, the others cut short by a crash."""
    xids = [r for r in records if r["event_type"] == "XidRaised"]
    gx = {"success": False, "failed_expectations": ["ts_not_in_future"], "results": [{"ok": False}]}
    q = "_quarantine/xid_raised"
    write(root, f"{q}/fleet.errors-p0-o5-6/data.parquet", xids[:2])
    write_json(root, f"{q}/fleet.errors-p0-o5-6/report.json", {
        **gx, "batch_id": "fleet.errors-p0-o5-6", "topic": "fleet.errors", "partition": 0, "first_offset": 5,
        "last_offset": 6, "quarantined_rows": 2, "quarantined_at": "2025-01-01T10:00:00.000+00:00",
        "data": f"{q}/fleet.errors-p0-o5-6/data.parquet"})  # fmt: skip
    write(root, f"{q}/fleet.errors-p0-o7-7/data.parquet", xids[2:3])  # no report: its write was cut short
    write(root, f"{q}/fleet.errors-p0-o11-11/data.parquet", xids[3:])  # past the committed offset
    write_json(root, f"{q}/fleet.errors-p0-o11-11/report.json", {**gx, "quarantined_rows": 1})
    at = dt.datetime(2025, 1, 1, 9, tzinfo=dt.UTC)
    rejected = pa.Table.from_pylist(
        [{"topic": "fleet.errors", "partition": 0, "offset": o, "timestamp_ms": 1, "key": b"h", "value": b"\x00",
          "error_type": "DecodeError", "reason": "bad magic byte", "rejected_at": at} for o in (2, 12)],
        schema=OLD_REJECTED)  # fmt: skip
    for rel, rows in (("fleet.errors-p0-o2-2", rejected[:1]), ("fleet.errors-p0-o12-12", rejected[1:])):
        path = root / "_rejected/fleet.errors" / f"{rel}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(rows, path)


def test_convert_copies_the_published_quarantine_and_rejects(
    tmp_path: Path, lake: DeltaTables, records: list[dict[str, Any]]
) -> None:
    old = tmp_path / "old"
    old_lake(old, records)
    old_side_records(old, records)
    rows = legacy.convert(old, lake)
    assert {t: n for t, n in rows.items() if t.startswith("_")} == {
        "_quarantine/xid_raised": 2, "_quarantine/_reports": 1, "_rejected": 1}  # fmt: skip
    xids = [r for r in records if r["event_type"] == "XidRaised"]
    held = quarantined(lake, "xid_raised")
    assert held is not None
    assert sorted(held.collect()["event_id"]) == sorted(r["event_id"] for r in xids[:2])
    [entry] = quarantine_entries(lake)
    assert (entry.table, entry.batch_id, entry.rows, entry.failed_expectations) == (
        "xid_raised", "fleet.errors-p0-o5-6", 2, ("ts_not_in_future",))  # fmt: skip
    assert entry.report == {"success": False, "failed_expectations": ["ts_not_in_future"], "results": [{"ok": False}]}
    assert entry.quarantined_at.startswith("2025-01-01T10:00:00")
    got = Lake(lake).rejected().select("partition", "offset", "reason").collect().rows()
    assert got == [(0, 2, "bad magic byte")]
