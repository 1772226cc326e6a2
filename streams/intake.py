"""Where a record the Faust agents consume enters the worker: the offset it was read at (lag, the
planner's progress marks), the event-time watermark, and decode-and-validate or the dead-letter topic."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import faust

from schemas import Codec, DecodeError
from streams.core.errors import InvalidRecordError
from streams.core.policy import ValidationLimits
from streams.core.validate import decode_checked
from streams.deadletter import DeadLetter, faust_source
from streams.metrics import DetectMetrics


class Intake:
    """The offsets read per (topic, partition), the newest event time seen, and the validation step."""

    def __init__(
        self,
        codec: Codec,
        limits: ValidationLimits,
        metrics: DetectMetrics,
        dead_letter: DeadLetter,
        clock: Callable[[], float],
    ) -> None:
        self.codec = codec
        self.limits = limits
        self.metrics = metrics
        self.dead_letter = dead_letter
        self.clock = clock
        self.last_offsets: dict[tuple[str, int], int] = {}
        self.watermark = 0

    def read(self, msg: Any) -> None:
        """Note where a Faust message was read (its partition's lag and progress start from it)."""
        self.last_offsets[(msg.topic, msg.partition)] = msg.offset

    def forget(self, topic: str, partition: int) -> None:
        """A revoked partition: caught up is judged by the commit again."""
        self.last_offsets.pop((topic, partition), None)

    def advance_watermark(self, ts: int) -> None:
        if ts > self.watermark:
            self.watermark = ts
            self.metrics.watermark.set(ts)

    async def valid_record(self, event: faust.types.EventT) -> dict[str, Any] | None:
        """Decode and validate; dead-letter and return None if it fails."""
        msg = event.message
        self.read(msg)
        value = event.value
        try:
            record = decode_checked(self.codec, value, self.limits, int(self.clock() * 1000))
        except (DecodeError, InvalidRecordError) as exc:
            await self.dead_letter(exc, faust_source(msg, value))
            return None
        self.metrics.consumed(msg.topic, record["event_type"])
        self.advance_watermark(record["ts"])
        return record
