"""Follows the progress topic, where producers report how far they have got (``schemas.progress``).

Read from its end when the worker starts (only reports from then on matter: until a writer
reports again, its partitions fall back to the quiet rule). Every worker reads the whole topic, so
a record that does not decode is skipped, counted and logged, not dead-lettered (every worker
would write the same one); reports of writers the worker was not told of are counted and ignored.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from aiokafka import AIOKafkaConsumer
from aiokafka.errors import KafkaError

from schemas import DecodeError
from schemas.progress import decode_progress
from streams.core.planning.writers import WriterMarks
from streams.tailer import topic_partitions

log = logging.getLogger(__name__)

RETRY_S = 1.0


class ProgressFeed:
    """Hands the declared writers' reports to ``marks``, and calls ``on_report`` after each batch that moved one."""

    def __init__(
        self, topic: str, client_config: dict[str, Any], marks: WriterMarks, on_report: Callable[[], None]
    ) -> None:
        self.topic = topic
        self.client_config = client_config
        self.marks = marks
        self.on_report = on_report
        self.undecodable = 0
        self._stopping = False

    def feed(self, value: bytes | None) -> bool:
        """Keep one raw record of the topic; whether it was a declared writer's report."""
        try:
            progress = decode_progress(value)
        except DecodeError as exc:
            self.undecodable += 1
            log.warning("%s: skipping a record that is no progress report: %s", self.topic, exc.reason)
            return False
        return self.marks.note(progress)

    async def run_retrying(self) -> None:
        """``run``, started again after a broker error: without reports the worker keeps the quiet rule."""
        while not self._stopping:
            try:
                await self.run()
            except KafkaError as exc:
                log.warning("%s: %s; reading it again from its end", self.topic, type(exc).__name__)
                await asyncio.sleep(RETRY_S)

    async def run(self) -> None:
        """Consume until cancelled or ``stop()``."""
        consumer = AIOKafkaConsumer(
            enable_auto_commit=False, group_id=None, fetch_max_wait_ms=50, **self.client_config
        )
        await consumer.start()
        try:
            # no progress topic (yet): every partition keeps the quiet rule
            partitions = await topic_partitions(
                consumer, self.topic, poll_s=1.0, stopping=lambda: self._stopping
            )
            consumer.assign(partitions)
            await consumer.seek_to_end(*partitions)
            while not self._stopping:
                batches = await consumer.getmany(timeout_ms=100, max_records=2000)
                moved = [self.feed(m.value) for messages in batches.values() for m in messages]
                if any(moved):
                    self.on_report()
        finally:
            await consumer.stop()

    def stop(self) -> None:
        self._stopping = True
