"""Where things live: table names, app ids, batch ids, and dates from event time in UTC."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from analytics.errors import LakeError
from analytics.lake.layout import (
    OFFSETS_TABLE,
    QUARANTINE_REPORTS,
    REJECTED_TABLE,
    OffsetRange,
    TopicPartition,
    app_id,
    archiver_tables,
    date_of,
    quarantine_table,
)
from analytics.tables import event_type_of, table_of
from ground.delta import DATE, TS_UTC, join, with_date


@pytest.mark.parametrize("topic", ["fleet.errors", "test.t-x-p1-o2-3.abc", "a"])
def test_batch_ids_and_app_ids_name_the_partition(topic: str) -> None:
    rng = OffsetRange(topic, 12, 1000, 1999)
    assert str(rng) == f"{topic}-p12-o1000-1999"
    assert rng.tp == TopicPartition(topic, 12)
    assert str(rng.tp) == f"{topic}[12]"
    assert app_id("fleetpulse-archiver", rng.tp) == f"fleetpulse-archiver:{topic}:12"


def test_archiver_tables_sit_beside_the_data_tables() -> None:
    assert quarantine_table("xid_raised") == "_quarantine/xid_raised"
    assert archiver_tables(["host_sampled", "xid_raised"]) == [
        OFFSETS_TABLE,
        REJECTED_TABLE,
        "_quarantine/host_sampled",
        "_quarantine/xid_raised",
        QUARANTINE_REPORTS,
    ]
    assert QUARANTINE_REPORTS == "_quarantine/_reports"


@pytest.mark.parametrize(
    ("ts", "date"),
    [
        (0, "1970-01-01"),
        (1_735_689_599_999, "2024-12-31"),  # one ms before midnight UTC
        (1_735_689_600_000, "2025-01-01"),
        (-1, "1969-12-31"),
    ],
)
def test_date_of_is_utc(ts: int, date: str) -> None:
    assert date_of(ts) == date
    dated = with_date(pa.table({"ts": pa.array([ts], pa.int64())}))
    # the partition Delta files it under
    assert dated.column(DATE).to_pylist() == [dt.date.fromisoformat(date)]


def test_with_date_replaces_a_stale_date_column() -> None:
    stale = pa.table({"ts": [1_735_689_600_000], DATE: pa.array([dt.date(1999, 1, 1)], pa.date32())})
    assert with_date(stale).column(DATE).to_pylist() == [dt.date(2025, 1, 1)]
    assert with_date(stale).column_names == ["ts", DATE, TS_UTC]  # and the UTC timestamp beside ts


def test_date_outside_calendar_is_a_lake_error() -> None:
    with pytest.raises(LakeError, match="outside the calendar"):
        date_of(2**62)


def test_table_paths_under_a_folder_or_a_uri() -> None:
    assert join("s3://bucket/lake/", "_quarantine/x") == "s3://bucket/lake/_quarantine/x"
    assert join("/data/lake", "host_sampled") == "/data/lake/host_sampled"
    assert join("/data/lake", "") == "/data/lake"


def test_tables_and_event_types() -> None:
    assert table_of("HostSampled") == "host_sampled"
    assert table_of("host_sampled") == "host_sampled"
    assert event_type_of("record_dead_lettered") == "RecordDeadLettered"
    with pytest.raises(LakeError, match="unknown lake table"):
        table_of("nope")
