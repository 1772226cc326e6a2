"""Read a whole topic into local state and keep following it (every worker, no consumer group).

Used for the two logs every worker needs in full: the compacted ``fleet.inventory`` (host ->
cluster, rack, maintenance domain) and ``fleet.actions`` (the fleet state is a fold over it).
``catch_up()`` waits until everything written before the call has been applied. It asks for the
log's end on a connection of its own: the broker answers one request at a time per connection, so on
the follower's it would wait behind the fetch the follower keeps in flight (up to its 50 ms wait),
and the planner catches up before each of its messages.

Every worker reads these logs whole, on every start, so one bad record must not stop a worker:
records that do not decode, are of another event type, or that ``on_record`` rejects are
skipped, counted and logged (not dead-lettered: every worker would write the same record).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import KafkaError

from schemas import Codec, DecodeError
from streams.core.log_mark import LogMark, checksum

log = logging.getLogger(__name__)

OnRecord = Callable[[dict[str, Any]], None]
OnProgress = Callable[[dict[int, LogMark]], object]  # what it returns is ignored


class LogTailer:
    """Follows every partition of one topic from the beginning and hands decoded records to ``on_record``."""

    def __init__(
        self,
        topic: str,
        client_config: dict[str, Any],
        on_record: OnRecord,
        codec: Codec,
        event_type: str | frozenset[str] | None = None,
        *,
        start: Mapping[int, LogMark] | None = None,
        on_rewind: Callable[[], None] | None = None,
        on_progress: OnProgress | None = None,
    ) -> None:
        """``start``: per partition, where the caller's state (a snapshot) stands; if this log does not
        hold that record there (recreated, fewer partitions) ``on_rewind`` is called and the log is read
        from its beginning. ``on_progress`` gets the marks after each fetched batch, when every record
        before them has been handed to ``on_record``."""
        self.topic = topic
        self.start = dict(start or {})
        self.marks: dict[int, LogMark] = dict(self.start)
        self.on_rewind = on_rewind
        self.on_progress = on_progress
        self.client_config = client_config
        self.on_record = on_record
        self.codec = codec
        self.event_type = event_type
        self._accepted = frozenset({event_type}) if isinstance(event_type, str) else event_type
        self.undecodable = 0
        self.foreign = 0
        self.rejected = 0
        self.records = 0
        self._consumer: AIOKafkaConsumer | None = None
        self._ends: AIOKafkaConsumer | None = None  # asks for end offsets only (see the module)
        self._ends_made = asyncio.Lock()
        self._partitions: list[TopicPartition] = []
        self._positions: dict[TopicPartition, int] = {}
        self._progress = asyncio.Condition()
        self._started = asyncio.Event()
        self._stopping = False

    async def run(self) -> None:
        """Consume until cancelled or ``stop()``."""
        consumer = AIOKafkaConsumer(
            enable_auto_commit=False, group_id=None, fetch_max_wait_ms=50, **self.client_config
        )
        await consumer.start()
        self._consumer = consumer
        try:
            self._partitions = await topic_partitions(consumer, self.topic, poll_s=0.2)
            consumer.assign(self._partitions)
            await consumer.seek_to_beginning(*self._partitions)
            if self.start:
                await self._resume(consumer)
            for tp in self._partitions:
                self._positions[tp] = await consumer.position(tp)
            self._started.set()
            while not self._stopping:
                batches = await consumer.getmany(timeout_ms=100, max_records=2000)
                for tp, messages in batches.items():
                    for message in messages:
                        self.feed(message.value)
                    if messages:
                        last = messages[-1]
                        self.marks[tp.partition] = LogMark(last.offset + 1, checksum(last.value))
                for tp in self._partitions:
                    self._positions[tp] = await consumer.position(tp)
                if batches and self.on_progress is not None:
                    self.on_progress(dict(self.marks))
                async with self._progress:
                    self._progress.notify_all()
        finally:
            self._consumer = None
            ends, self._ends = self._ends, None
            await consumer.stop()
            if ends is not None:
                await ends.stop()

    async def _resume(self, consumer: AIOKafkaConsumer) -> None:
        """Seek to ``start``, or rewind when it is not a position in this log."""
        by_partition = {tp.partition: tp for tp in self._partitions}
        ends = await consumer.end_offsets(self._partitions)
        if set(self.start) - set(by_partition) or not all(
            [await self._holds(consumer, by_partition[p], mark, ends) for p, mark in self.start.items()]
        ):
            log.warning("%s: the saved positions are not of this log: reading it from the start", self.topic)
            self.marks = {}
            if self.on_rewind is not None:
                self.on_rewind()
            await consumer.seek_to_beginning(*self._partitions)
            return
        for p, mark in self.start.items():
            consumer.seek(by_partition[p], mark.next_offset)

    @staticmethod
    async def _holds(
        consumer: AIOKafkaConsumer, tp: TopicPartition, mark: LogMark, ends: Mapping[TopicPartition, int]
    ) -> bool:
        """True when the record before ``mark`` is in the log with the same checksum."""
        if mark.next_offset > ends[tp]:
            return False
        consumer.seek(tp, mark.next_offset - 1)
        fetched = await consumer.getmany(tp, timeout_ms=5_000, max_records=1)
        got = fetched.get(tp, [])
        return bool(got) and got[0].offset == mark.next_offset - 1 and checksum(got[0].value) == mark.crc

    def feed(self, value: bytes | None) -> None:
        """Hand one raw record of the log to ``on_record``, or skip, count and log it (see the module)."""
        if value is None:
            return  # a compaction tombstone
        try:
            record = self.codec.decode(value).record
        except DecodeError as exc:
            self.undecodable += 1
            log.warning("%s: skipping undecodable record: %s", self.topic, exc.reason)
            return
        if self._accepted is not None and record.get("event_type") not in self._accepted:
            self.foreign += 1
            log.warning(
                "%s: skipping a %s record (this log holds %s)",
                self.topic,
                record.get("event_type"),
                ", ".join(sorted(self._accepted)),
            )
            return
        try:
            self.on_record(record)
        except Exception as exc:  # a valid record the state cannot take: skip it, keep the worker
            self.rejected += 1
            log.warning("%s: skipping record %s: %r", self.topic, record.get("event_id"), exc)
            return
        self.records += 1

    def stop(self) -> None:
        self._stopping = True

    async def end_offsets(self) -> dict[TopicPartition, int]:
        assert self._consumer is not None
        async with self._ends_made:  # one connection: concurrent callers (the planner, a stage) wait for it
            if self._ends is None:
                ends = AIOKafkaConsumer(enable_auto_commit=False, group_id=None, **self.client_config)
                try:
                    await ends.start()
                except BaseException:  # the broker is gone: the caller retries, with a new one
                    await _stop_started(ends)
                    raise
                if self._consumer is None:  # the tailer stopped meanwhile
                    await _stop_started(ends)
                else:
                    self._ends = ends
        consumer = self._ends or self._consumer
        assert consumer is not None
        return await consumer.end_offsets(self._partitions)

    async def catch_up(self, timeout_s: float = 30.0) -> None:
        """Wait until every record written before this call has been applied."""
        await asyncio.wait_for(self._started.wait(), timeout_s)
        ends = await self.end_offsets()

        def done() -> bool:
            return all(self._positions.get(tp, 0) >= end for tp, end in ends.items())

        async with self._progress:
            await asyncio.wait_for(self._progress.wait_for(done), timeout_s)

    @property
    def started(self) -> bool:
        return self._started.is_set()


async def _stop_started(consumer: AIOKafkaConsumer) -> None:
    """Stop a consumer that has just started: aiokafka cancels a task of its own that has not run yet
    and awaits it, which raised CancelledError in the caller (a stage's catch-up, which crashed its agent)."""
    await asyncio.sleep(0)  # let that task start: cancelled then, it ends cleanly
    await consumer.stop()


async def topic_partitions(
    consumer: AIOKafkaConsumer, topic: str, *, poll_s: float, stopping: Callable[[], bool] = lambda: False
) -> list[TopicPartition]:
    """``topic``'s partitions once the broker knows it, asked every ``poll_s``; none if ``stopping()`` first."""
    parts: set[int] | None = None
    while not parts and not stopping():
        # topics() fetches metadata but does not refresh the consumer's cluster view
        await consumer._client.force_metadata_update()
        parts = consumer.partitions_for_topic(topic)
        if not parts:
            await asyncio.sleep(poll_s)
    return [TopicPartition(topic, p) for p in sorted(parts or ())]


CATCH_UP_RETRY_S = 1.0


async def catch_up_retrying(tailer: LogTailer) -> None:
    """``tailer.catch_up()``, retried until it succeeds (a broker outage, a long replay on start).

    Giving up would lose the message being handled: faust-streaming acks an event whose
    processing raised, so the finding would never be planned.
    """
    while True:
        try:
            await tailer.catch_up()
            return
        except (TimeoutError, KafkaError) as exc:
            log.warning("%s: not caught up yet (%s); retrying", tailer.topic, type(exc).__name__)
            await asyncio.sleep(CATCH_UP_RETRY_S)


@dataclass(frozen=True)
class WorkerLogs:
    """The logs a detect worker folds into memory beside its stages: the inventory, the fleet's actions
    (the planner's state) and the findings (served to the console)."""

    inventory: LogTailer
    actions: LogTailer
    findings: LogTailer

    @property
    def planner_ready(self) -> bool:
        """The inventory and the actions are being read: the planner may size domains and decide."""
        return self.inventory.started and self.actions.started
