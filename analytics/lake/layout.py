"""Where everything lives in the lake, and the file names that carry Kafka offsets.

<lake>/<table>/date=YYYY-MM-DD/<topic>-p<partition>-o<first>-<last>.parquet   archived data
<lake>/<table>/date=YYYY-MM-DD/compacted-<digest>.parquet                    compaction output
<lake>/_manifest/offsets/<topic>/<partition>.json                           committed offsets
<lake>/_manifest/compactions/<table>/date=…/compacted-<digest>.json         compaction commits
<lake>/_quarantine/<table>/<batch_id>/{report.json, <archive name>…}        failed quality gates
<lake>/_rejected/<topic>/<archive name>                                     undecodable records
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
from typing import NamedTuple

from analytics.errors import LakeError

DAY_MS = 86_400_000
EPOCH = dt.date(1970, 1, 1)

MANIFEST_DIR = "_manifest"
OFFSETS_DIR = f"{MANIFEST_DIR}/offsets"
COMPACTIONS_DIR = f"{MANIFEST_DIR}/compactions"
QUARANTINE_DIR = "_quarantine"
REJECTED_DIR = "_rejected"
REPORT_NAME = "report.json"
COMPACTED_PREFIX = "compacted-"

_ARCHIVE_NAME = re.compile(r"^(?P<topic>.+)-p(?P<partition>\d+)-o(?P<first>\d+)-(?P<last>\d+)\.parquet$")
_DATE_DIR = re.compile(r"^date=(\d{4}-\d{2}-\d{2})$")



class TopicPartition(NamedTuple):
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}[{self.partition}]"


class ArchiveName(NamedTuple):
    """An archiver file name: which Kafka partition and offset range the file's records came from."""

    topic: str
    partition: int
    first: int
    last: int

    @property
    def tp(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)

    def __str__(self) -> str:
        return f"{self.topic}-p{self.partition}-o{self.first}-{self.last}.parquet"


def parse_archive_name(name: str) -> ArchiveName | None:
    """The offsets encoded in an archiver file name; None for any other file (simulator, compaction)."""
    match = _ARCHIVE_NAME.match(posixpath.basename(name))
    if match is None:
        return None
    first, last = int(match["first"]), int(match["last"])
    if last < first:
        return None
    return ArchiveName(match["topic"], int(match["partition"]), first, last)


def is_compacted(name: str) -> bool:
    base = posixpath.basename(name)
    return base.startswith(COMPACTED_PREFIX) and base.endswith(".parquet")


def date_of_day(day: int) -> str:
    """``YYYY-MM-DD`` of a day number since the epoch (UTC)."""
    try:
        return (EPOCH + dt.timedelta(days=day)).isoformat()
    except OverflowError:
        raise LakeError(f"event time of day {day} since the epoch is outside the calendar") from None


def date_of(ts_ms: int) -> str:
    """UTC date partition of an event time in epoch milliseconds."""
    return date_of_day(ts_ms // DAY_MS)


def date_dir(date: str) -> str:
    return f"date={date}"


def parse_date_dir(name: str) -> str | None:
    match = _DATE_DIR.match(name)
    return match.group(1) if match else None


def data_path(table: str, date: str, file_name: str) -> str:
    return f"{table}/{date_dir(date)}/{file_name}"


def offsets_path(tp: TopicPartition) -> str:
    return f"{OFFSETS_DIR}/{tp.topic}/{tp.partition}.json"


def compaction_record_path(table: str, date: str, compacted_name: str) -> str:
    stem = posixpath.splitext(compacted_name)[0]
    return f"{COMPACTIONS_DIR}/{table}/{date_dir(date)}/{stem}.json"


def quarantine_dir(table: str, batch_id: str) -> str:
    return f"{QUARANTINE_DIR}/{table}/{batch_id}"


def rejected_path(name: ArchiveName) -> str:
    return f"{REJECTED_DIR}/{name.topic}/{name}"
