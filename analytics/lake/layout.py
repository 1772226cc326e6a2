"""Where everything lives in the lake: one Delta table per event type, plus the archiver's own tables.

<lake>/<table>/                   Delta table of one event type, partitioned by ``date`` (UTC day of ``ts``)
<lake>/_offsets/                  the archiver's commits: one row per Kafka partition per flush
<lake>/_rejected/                 undecodable records and event times off the calendar, with the reason
<lake>/_quarantine/<table>/       rows of batches that failed their quality gate (the table's columns + batch_id)
<lake>/_quarantine/_reports/      one row per quarantined slice: which expectations failed, the GX report
"""

from __future__ import annotations

import datetime as dt
from typing import NamedTuple

from analytics.errors import LakeError
from ground.delta import DAY_MS

EPOCH = dt.date(1970, 1, 1)

OFFSETS_TABLE = "_offsets"
REJECTED_TABLE = "_rejected"
QUARANTINE_DIR = "_quarantine"
QUARANTINE_REPORTS = f"{QUARANTINE_DIR}/_reports"


class TopicPartition(NamedTuple):
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}[{self.partition}]"


class OffsetRange(NamedTuple):
    """Records of one Kafka partition at offsets ``first..last`` (not always contiguous: one partition feeds several tables)."""

    topic: str
    partition: int
    first: int
    last: int

    @property
    def tp(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)

    def __str__(self) -> str:
        return f"{self.topic}-p{self.partition}-o{self.first}-{self.last}"


def app_id(group_id: str, tp: TopicPartition) -> str:
    """The Delta app-transaction id of one archiver group's Kafka partition (kafka-delta-ingest's scheme)."""
    return f"{group_id}:{tp.topic}:{tp.partition}"


def report_app_id(group_id: str, tp: TopicPartition, table: str) -> str:
    """The app id of ``table``'s reports in ``_quarantine/_reports``, which every table shares.

    The shared table needs a version per table: a crash between a table's quarantined rows and its
    report must leave that report missing even when another table's report of the same partition committed.
    """
    return f"{app_id(group_id, tp)}:{table}"


def quarantine_table(table: str) -> str:
    return f"{QUARANTINE_DIR}/{table}"


def date_of_day(day: int) -> str:
    """``YYYY-MM-DD`` of a day number since the epoch (UTC)."""
    try:
        return (EPOCH + dt.timedelta(days=day)).isoformat()
    except OverflowError:
        raise LakeError(f"event time of day {day} since the epoch is outside the calendar") from None


CALENDAR_MS = range((dt.date.min - EPOCH).days * DAY_MS, ((dt.date.max - EPOCH).days + 1) * DAY_MS)
"""Event times (epoch ms) that ``date_of`` files under a date: years 1 to 9999."""


def date_of(ts_ms: int) -> str:
    """UTC date partition of an event time in epoch milliseconds."""
    return date_of_day(ts_ms // DAY_MS)


def archiver_tables(data_tables: list[str]) -> list[str]:
    """The archiver's own tables beside ``data_tables``: offsets, rejects, quarantine rows and reports."""
    return [OFFSETS_TABLE, REJECTED_TABLE, *(quarantine_table(t) for t in data_tables), QUARANTINE_REPORTS]
