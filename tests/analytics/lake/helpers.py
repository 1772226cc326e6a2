"""Factories for lake tests: synthetic events as consumed Kafka records, on the default topic names."""

from __future__ import annotations

import datetime as dt
import zlib
from collections.abc import Iterable
from typing import Any

from analytics.lake.batch import ConsumedRecord
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
