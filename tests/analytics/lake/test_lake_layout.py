"""File names carry Kafka offsets; dates come from event time in UTC."""

from __future__ import annotations

import pytest

from analytics.errors import LakeError
from analytics.lake.layout import ArchiveName, TopicPartition, date_of, is_compacted, parse_archive_name
from analytics.tables import event_type_of, table_of


@pytest.mark.parametrize("topic", ["fleet.errors", "test.t-x-p1-o2-3.abc", "a"])
def test_archive_name_round_trips(topic: str) -> None:
    name = ArchiveName(topic, 12, 1000, 1999)
    assert str(name) == f"{topic}-p12-o1000-1999.parquet"
    assert parse_archive_name(str(name)) == name
    assert parse_archive_name(f"fleet.samples/date=2025-01-01/{name}") == name
    assert name.tp == TopicPartition(topic, 12)


@pytest.mark.parametrize(
    "other",
    [
        "part-0.parquet",
        "compacted-0123abcd.parquet",
        "x-p1-o5-4.parquet",
        "x-p1-o1-2.json",
        "x-pa-o1-2.parquet",
    ],
)
def test_other_files_have_no_offsets(other: str) -> None:
    assert parse_archive_name(other) is None


def test_compacted_names() -> None:
    assert is_compacted("t/date=2025-01-01/compacted-00ff.parquet")
    assert not is_compacted("t/date=2025-01-01/fleet.errors-p0-o1-2.parquet")


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


def test_date_outside_calendar_is_a_lake_error() -> None:
    with pytest.raises(LakeError, match="outside the calendar"):
        date_of(2**62)


def test_tables_and_event_types() -> None:
    assert table_of("HostSampled") == "host_sampled"
    assert table_of("host_sampled") == "host_sampled"
    assert event_type_of("record_dead_lettered") == "RecordDeadLettered"
    with pytest.raises(LakeError, match="unknown lake table"):
        table_of("nope")
