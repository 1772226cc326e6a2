"""Factories for lake tests: synthetic events as consumed Kafka records, on the default topic names."""

from __future__ import annotations

import datetime as dt
import zlib
from collections.abc import Iterable
from typing import Any

from analytics.lake.layout import TopicPartition
from analytics.lake.offsets import read_frontier
from analytics.lake.reader import Lake
from analytics.lake.records import ConsumedRecord
from ground.delta import DeltaTables
from ground.kafka.topics import TopicSettings
from ground.settings.lake import LakeSettings
from schemas import Codec
from schemas.events import topic_family

NOW = dt.datetime(2025, 2, 1, tzinfo=dt.UTC)
TOPICS = TopicSettings()


def topic_of(record: dict[str, Any], topics: TopicSettings = TOPICS) -> str:
    return getattr(topics, topic_family(record["event_type"])).name


def as_consumed(
    records: Iterable[dict[str, Any]],
    *,
    codec: Codec | None = None,
    partitions: int = 2,
    start: dict[tuple[str, int], int] | None = None,
    topics: TopicSettings = TOPICS,
) -> list[ConsumedRecord]:
    """Encode records and give them Kafka coordinates: partition by host (like the producers), offsets in order."""
    codec = codec or Codec()
    next_offset = dict(start or {})
    out = []
    for record in records:
        topic = topic_of(record, topics)
        partition = zlib.crc32(record["host_id"].encode()) % partitions
        offset = next_offset.get((topic, partition), 0)
        next_offset[(topic, partition)] = offset + 1
        out.append(
            ConsumedRecord(
                topic, partition, offset, record["ts"], record["host_id"].encode(), codec.encode(record)
            )
        )
    return out


def garbage(topic: str, partition: int, offset: int, value: bytes | None = b"\x07not avro") -> ConsumedRecord:
    return ConsumedRecord(topic, partition, offset, 0, None, value)


def lake_settings(**overrides: Any) -> LakeSettings:
    return LakeSettings(**overrides)


def event_ids(lake: DeltaTables) -> list[str]:
    """event_id of every data row of every table (repeats kept, so a row written twice shows)."""
    reader = Lake(lake)
    ids: list[str] = []
    for table in reader.tables():
        ids += reader.scan(table).select("event_id").collect().get_column("event_id").to_list()
    return ids


def frontier(lake: DeltaTables, group_id: str = LakeSettings().group_id) -> dict[TopicPartition, int]:
    """Next offset to archive per Kafka partition, as the ``_offsets`` rows of ``group_id`` say."""
    return {tp: n for (group, tp), n in read_frontier(lake).items() if group == group_id}


def next_offsets(consumed: Iterable[ConsumedRecord]) -> dict[TopicPartition, int]:
    """One past the last offset of each partition among ``consumed``."""
    out: dict[TopicPartition, int] = {}
    for rec in consumed:
        out[rec.tp] = max(out.get(rec.tp, 0), rec.offset + 1)
    return out


def files_per_date(lake: DeltaTables, table: str) -> dict[str, int]:
    """Data files of the table's current version per date partition."""
    out: dict[str, int] = {}
    for uri in Lake(lake).files(table):
        date = uri.rsplit("/", 2)[-2].removeprefix("date=")
        out[date] = out.get(date, 0) + 1
    return out


def ids_of(lake: DeltaTables, table: str) -> list[str]:
    return sorted(Lake(lake).scan(table).select("event_id").collect().get_column("event_id").to_list())


class FakeConsumer:
    """The part of a KafkaConsumer that ``Archiver._start`` uses, every partition holding offsets 5-19."""

    def __init__(self) -> None:
        self.seeks: dict[Any, int] = {}

    def beginning_offsets(self, tps: list[Any]) -> dict[Any, int]:
        return {tp: 5 for tp in tps}

    def end_offsets(self, tps: list[Any]) -> dict[Any, int]:
        return {tp: 20 for tp in tps}

    def seek(self, tp: Any, offset: int) -> None:
        self.seeks[tp] = offset

    def commit(self, offsets: Any) -> None:
        pass
