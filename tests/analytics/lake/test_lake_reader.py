"""The reader API: Delta tables as LazyFrames, empty tables with schema, older schemas, other writers, URIs."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from analytics.errors import LakeError
from analytics.lake.batch import plan_batch
from analytics.lake.reader import Lake, polars_schema, scan
from ground.delta import DATE, DeltaTables, with_date
from schemas import Codec
from schemas.arrow import to_table
from tests.analytics.lake.helpers import as_consumed, garbage


def test_missing_table_is_empty_with_schema(tmp_path: Path) -> None:
    frame = scan(tmp_path / "nowhere", "HostSampled").collect()
    assert frame.height == 0
    assert frame.schema["date"] == pl.Date
    assert frame.schema["gpus"] == polars_schema("host_sampled")["gpus"]
    assert list(frame.columns)[:7] == [
        "event_id",
        "event_type",
        "schema_version",
        "host_id",
        "cluster",
        "ts",
        "agent_seq",
    ]


def test_a_young_lake_has_no_tables_and_empty_archiver_views(tmp_path: Path) -> None:
    lake = Lake(tmp_path / "young")
    assert lake.tables() == [] and lake.files("xid_raised") == [] and lake.version("xid_raised") is None
    assert lake.frontier() == {} and lake.quarantine() == [] and lake.quarantined("xid_raised") is None
    rejected = lake.rejected().collect()
    assert rejected.height == 0 and {"offset", "reason", "value"} <= set(rejected.columns)
    assert lake.known_hosts() == set()


def test_unknown_table_is_a_lake_error(tmp_path: Path) -> None:
    with pytest.raises(LakeError, match="unknown lake table"):
        scan(tmp_path, "nope")


def test_another_writers_delta_table_is_read(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    """The simulator's lake sink writes Delta tables through ``DeltaTables`` with its own app ids."""
    delta = DeltaTables(tmp_path)
    alerts = [r for r in records if r["event_type"] == "AlertRaised"]
    samples = [r for r in records if r["event_type"] == "HostSampled"]
    delta.append("alert_raised", with_date(to_table("AlertRaised", alerts)), partition_by=[DATE])
    for part in (samples[:5], samples[5:]):
        delta.append(
            "host_sampled",
            with_date(to_table("HostSampled", part)),
            partition_by=[DATE],
            versions={"sim:run1": 1},
        )
    frame = scan(tmp_path, "host_sampled").collect()
    assert frame.height == len(samples)
    assert sorted(frame.get_column("date").unique().to_list()) == [dt.date(2025, 1, 1), dt.date(2025, 1, 2)]
    assert frame.get_column("date").to_list() == [
        dt.datetime.fromtimestamp(ts / 1000, dt.UTC).date() for ts in frame.get_column("ts")
    ]
    labels = scan(tmp_path, "alert_raised").collect().get_column("labels").to_list()
    assert labels and labels[0] is not None
    lake = Lake(tmp_path)
    assert lake.tables() == ["alert_raised", "host_sampled"]
    assert lake.version("host_sampled") == 1 and len(lake.files("host_sampled")) >= 2
    assert all("/host_sampled/date=" in uri for uri in lake.files("host_sampled"))
    assert lake.frontier() == {}, "not written by the archiver: no committed offsets"


def test_older_data_missing_a_column_reads_as_null(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    delta = DeltaTables(tmp_path)
    xids = [r for r in records if r["event_type"] == "XidRaised"]
    older = to_table("XidRaised", xids[:2]).drop_columns(["message"])  # an event schema without the field
    delta.append("xid_raised", with_date(older), partition_by=[DATE])
    frame = scan(tmp_path, "XidRaised").collect()
    assert frame.height == 2 and frame.get_column("message").null_count() == 2
    assert frame.columns == [*polars_schema("xid_raised").names(), "date"]

    # the event schema grew a field: the table's schema follows
    delta.append("xid_raised", with_date(to_table("XidRaised", xids[2:])), partition_by=[DATE])
    frame = scan(tmp_path, "XidRaised").collect().sort("event_id")
    assert frame.height == len(xids)
    messages = dict(zip(frame.get_column("event_id"), frame.get_column("message"), strict=True))
    assert [messages[r["event_id"]] for r in xids] == [
        None,
        None,
        *(r["payload"]["message"] for r in xids[2:]),
    ]


def test_a_file_uri_reads_the_same_as_the_folder(
    tmp_path: Path, records: list[dict[str, Any]], publisher_factory, lake: DeltaTables
) -> None:  # type: ignore[no-untyped-def]
    """A URI goes to delta-rs' object store as given (stands in for s3:// and friends)."""
    publisher_factory().publish(plan_batch([*as_consumed(records), garbage("fleet.errors", 1, 99)], Codec()))
    remote = Lake(f"file://{lake.uri()}")
    assert remote.root.startswith("file://")
    assert remote.tables() == Lake(lake).tables()
    for table in ("host_sampled", "alert_raised"):
        via_remote = remote.scan(table).collect()
        via_local = Lake(lake).scan(table).collect()
        assert via_remote.height == via_local.height > 0
        assert sorted(via_remote.get_column("event_id")) == sorted(via_local.get_column("event_id"))
        assert via_remote.schema["date"] == pl.Date
    assert remote.frontier() == Lake(lake).frontier()
    assert remote.rejected().collect().height == 1
