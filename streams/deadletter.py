"""Dead letters: what goes to ``fleet.dlq`` when a record cannot be decoded or is not believable."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from schemas import FLEET, DecodeError, RecordDeadLettered
from streams.core.errors import InvalidRecordError
from streams.core.ids import dead_letter_id
from streams.core.validate import reason_label as reason_label  # the DLQ metric labels

if TYPE_CHECKING:
    from aiokafka.structs import ConsumerRecord


@dataclass(frozen=True, slots=True)
class SourceRecord:
    """Where a record came from, for its dead letter."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp_ms: int | None


# sends a dead letter; what it returns is the send's future (await it to know it landed)
DeadLetter = Callable[[DecodeError | InvalidRecordError, SourceRecord], Awaitable[Awaitable[Any]]]


def faust_source(msg: Any, value: Any) -> SourceRecord:
    """A Faust message's coordinates (its timestamp is in seconds)."""
    key = msg.key if isinstance(msg.key, bytes | bytearray) else None
    return SourceRecord(
        topic=msg.topic,
        partition=msg.partition,
        offset=msg.offset,
        key=bytes(key) if key is not None else None,
        value=bytes(value) if isinstance(value, bytes | bytearray) else None,
        timestamp_ms=int(msg.timestamp * 1000) if msg.timestamp else None,
    )


def consumer_source(message: ConsumerRecord[bytes, bytes]) -> SourceRecord:
    """An aiokafka record's coordinates (its timestamp is in milliseconds)."""
    return SourceRecord(
        topic=message.topic,
        partition=message.partition,
        offset=message.offset,
        key=message.key,
        value=message.value,
        timestamp_ms=message.timestamp,
    )


def dead_letter(
    exc: DecodeError | InvalidRecordError,
    *,
    topic: str,
    partition: int,
    offset: int,
    key: bytes | None,
    value: bytes | None,
    timestamp_ms: int,
) -> dict[str, Any]:
    """A RecordDeadLettered record; its id is a hash of the source coordinates (a replay dedups)."""
    host = getattr(exc, "host_id", None) or FLEET
    return RecordDeadLettered(
        event_id=dead_letter_id(topic, partition, offset),
        host_id=host,
        cluster=FLEET,
        ts=timestamp_ms,
        payload={
            "reason": exc.reason,
            "error_type": type(exc).__name__,
            "source_topic": topic,
            "source_partition": partition,
            "source_offset": offset,
            "schema_id": getattr(exc, "schema_id", None),
            "original_key": key,
            "original_value": value or b"",
        },
    ).to_record()
