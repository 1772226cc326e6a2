"""Dead letters: what goes to ``fleet.dlq`` when a record cannot be decoded or is not believable."""

from __future__ import annotations

from typing import Any

from schemas import FLEET, DecodeError, RecordDeadLettered
from streams.errors import InvalidRecordError
from streams.ids import dead_letter_id


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


def reason_label(exc: DecodeError | InvalidRecordError) -> str:
    """A low-cardinality label for metrics: the reason's first word."""
    if isinstance(exc, InvalidRecordError):
        return exc.reason.split(":", 1)[0]
    return type(exc).__name__
