"""The partitions a samples stage owns: their host windows, the summaries sent for them, their checkpoints.

Each batch a partition's consumer fetches is decoded column-wise (``streams.sample_wire``; a value
it cannot take is decoded, or dead-lettered, one by one) and folded into per-host event-time windows
(``FetchedBatch``, pure, the fold the backtest runs) held in memory; each closed window's summary,
and each partition's event-time progress, goes to the cluster stage's topic, bundled per cluster per
batch so that Faust handles one event per batch (``SummaryBundle``, ``streams.core.peers.messages``).

State is checkpointed, not changelogged: every ``samples_checkpoint_s`` the stage waits for its
summaries and dead letters to be acknowledged, then writes one record per owned partition
holding the partition's whole host-window state *and* the offset it is valid for
(``streams.core.samples.checkpoint``), to a compacted topic with one partition per samples partition.
A worker taking a partition over (restart, rebalance, crash) reads that one record and seeks to
its offset, so the state it resumes from is exactly the state those offsets produced: the
replayed records re-emit the same summaries (the cluster stage stores each host's summary under
one key, so a repeat overwrites itself; only the progress mark they carry may differ, and the
cluster stage keeps the highest), and no window is missed or double-counted. A partition whose
fold was interrupted (cancelled, or a dead letter failed) or whose sends were not acknowledged
is not checkpointed: the windows that fold closed would be gone from the saved state without
their summaries ever sent.

Event time used for progress is capped at the wall clock: validation lets a record through up
to ``max_future`` ahead, and one host whose clock runs ahead must not close every cluster's
windows before its peers' summaries arrive.

Idleness is declared here, at the source, and nowhere else: a partition whose fetches have come
back empty, with nothing left to read, for ``idle_partition_timeout`` of wall time is announced idle
to every cluster, and stops holding their watermarks back until it has data again. A partition
merely not heard from (the broker restarting, the worker down, a fetch failing) is never idle: the
cluster stage waits for it, so an outage cannot make one partition's hosts late for the others'.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.structs import ConsumerRecord

from schemas import Codec, DecodeError
from streams.core.errors import InvalidRecordError
from streams.core.peers.messages import ClusterItem, SummaryBundle, encode
from streams.core.policy import Policy
from streams.core.samples.checkpoint import PartitionState
from streams.core.samples.folder import FetchedBatch, SampleFolder, capped
from streams.core.samples.idle import IdleSources, caught_up
from streams.core.validate import decode_checked
from streams.deadletter import DeadLetter, consumer_source
from streams.metrics import DetectMetrics
from streams.sample_wire import EVENT_TYPE, SampleWire, WireFold

log = logging.getLogger(__name__)

YIELD_EVERY = 200  # records folded between two turns of the event loop
FETCH_MAX_WAIT_MS = 100  # a caught-up consumer fetches about this often
FETCH_FRESH_MS = 20 * FETCH_MAX_WAIT_MS  # an older fetch answer says nothing about "caught up now"


class SamplePartitions:
    """What the stage does with the partitions it owns; its run loop holds ``lock`` around every step.

    ``producer`` and ``consumer`` are the running stage's clients (None between runs).
    """

    def __init__(
        self,
        *,
        topic: str,
        summaries_topic: str,
        checkpoint_topic: str,
        client_config: dict[str, Any],
        folder: SampleFolder,
        codec: Codec,
        policy: Policy,
        metrics: DetectMetrics,
        dead_letter: DeadLetter,
        bundle_max: int = 500,
        on_watermark: Callable[[int], None] = lambda ts: None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.topic = topic
        self.summaries_topic = summaries_topic
        self.checkpoint_topic = checkpoint_topic
        self.client_config = client_config
        self.folder = folder
        self.codec = codec
        self.policy = policy
        self.metrics = metrics
        self.dead_letter = dead_letter
        self.bundle_max = bundle_max  # summaries per message to the cluster stage (one Faust event)
        self.on_watermark = on_watermark
        self.clock = clock
        self.parts: dict[int, PartitionState] = {}
        self.dirty: set[int] = set()
        self.torn: set[int] = set()  # mid-fold: state ahead of the summaries sent for it
        self._pending: list[Awaitable[Any]] = []
        self.lock = asyncio.Lock()
        self.consumer: AIOKafkaConsumer | None = None
        self.producer: AIOKafkaProducer | None = None
        self.idle = IdleSources(policy.slow_host.idle_partition_timeout)
        self.wire = SampleWire(codec, policy.validation)

    def forget_all(self) -> None:
        """Forget every partition (a failed run): each resumes from its checkpoint when assigned again."""
        for p in list(self.parts):
            self.idle.forget(p)
        self.parts.clear()
        self.dirty.clear()
        self.torn.clear()
        self._pending.clear()

    # -- the hot path ---------------------------------------------------------------------------

    async def fold_batch(self, partition: int, messages: list[ConsumerRecord[bytes, bytes]]) -> None:
        state = self.parts.get(partition)
        if state is None:
            return  # revoked while this batch was in flight
        self.torn.add(partition)  # until its summaries are sent, a checkpoint would lose them
        counts: Counter[str] = Counter()
        now_ms = int(self.clock() * 1000)
        batch = FetchedBatch(self.folder, state, now_ms)
        wire = self.wire.decode([m.value for m in messages], now_ms)  # rows it cannot take: -1
        fold = WireFold(self.folder, batch, wire)
        newest = -1
        for n, message in enumerate(messages, 1):
            if n % YIELD_EVERY == 0:
                fold.fold()
                await asyncio.sleep(0)  # let the API, the heartbeats and the other stages run
            if message.offset < state.next_offset:
                continue  # already inside the checkpoint this partition resumed from
            if (row := wire.row[n - 1]) >= 0:
                fold.add_row(row)
                counts[EVENT_TYPE] += 1
                newest = max(newest, capped(wire.columns.ts[row], now_ms))
                state.next_offset = message.offset + 1
                continue
            record, failure = self._valid(message, now_ms)
            if failure is not None:
                self._pending.append(await self.dead_letter(failure, consumer_source(message)))
            elif record is not None:
                counts[record["event_type"]] += 1
                newest = max(newest, capped(record["ts"], now_ms))  # a fast clock must not run ticks early
                fold.add(record)
            state.next_offset = message.offset + 1
        fold.fold()
        bundles, late = batch.bundles, batch.late
        if messages and self.idle.resume(partition) and state.wm >= 0:
            for msg in self.folder.progress(state):  # count this partition in the watermark again
                bundles.setdefault(msg.cluster, []).append(msg)
        await self._send_bundles(bundles)
        self.dirty.add(partition)
        self.torn.discard(partition)
        for event_type, n in counts.items():
            self.metrics.consumed(self.topic, event_type, n)
        if late:
            self.metrics.late.labels("samples").inc(late)
        if newest >= 0:
            self.on_watermark(newest)

    async def _send_bundles(self, bundles: dict[str, list[ClusterItem]]) -> None:
        """Messages for the cluster stage, one bundle (one Faust event) per cluster and ``bundle_max``."""
        assert self.producer is not None
        for cluster, items in bundles.items():
            for i in range(0, len(items), self.bundle_max):
                value = encode(SummaryBundle(cluster, tuple(items[i : i + self.bundle_max])))
                sent = await self.producer.send(self.summaries_topic, key=cluster.encode(), value=value)
                self._pending.append(sent)

    async def declare_idle(self, consumer: AIOKafkaConsumer) -> None:
        """Announce partitions that fresh fetches have shown caught up for the whole idle timeout."""
        now_ms = int(time.time() * 1000)  # aiokafka stamps its fetch answers with the wall clock
        assigned = consumer.assignment()
        bundles: dict[str, list[ClusterItem]] = {}
        for p, state in sorted(self.parts.items()):
            tp = TopicPartition(self.topic, p)
            if tp not in assigned:
                continue
            done = caught_up(
                state.next_offset,
                consumer.highwater(tp),
                consumer.last_poll_timestamp(tp),
                now_ms,
                FETCH_FRESH_MS,
            )
            if self.idle.observe(p, caught_up=done, now_ms=now_ms):
                notices = self.folder.progress(state, "idle")
                if not notices:
                    self.idle.retract(p)  # no cluster known yet (empty inventory): nobody to tell
                    continue
                log.debug("samples[%d]: idle (caught up at offset %d, nothing new)", p, state.next_offset)
                for msg in notices:
                    bundles.setdefault(msg.cluster, []).append(msg)
        await self._send_bundles(bundles)

    def _valid(
        self, message: ConsumerRecord[bytes, bytes], now_ms: int
    ) -> tuple[Any, DecodeError | InvalidRecordError | None]:
        try:
            return decode_checked(self.codec, message.value, self.policy.validation, now_ms), None
        except (DecodeError, InvalidRecordError) as exc:
            return None, exc

    # -- checkpoints ----------------------------------------------------------------------------

    async def checkpoint(self, partitions: Iterable[int]) -> None:
        """Wait for every output so far, then write the state of ``partitions`` with its offsets."""
        producer = self.producer
        if producer is None:
            return
        await self._await_pending()
        partitions = [p for p in partitions if p not in self.torn]  # their last checkpoint stands
        acks = []
        offsets = {}
        for p in partitions:
            state = self.parts.get(p)
            if state is None:
                continue
            acks.append(
                await producer.send(
                    self.checkpoint_topic, key=str(p).encode(), value=state.to_bytes(), partition=p
                )
            )
            offsets[TopicPartition(self.topic, p)] = state.next_offset
        if acks:
            await asyncio.gather(*acks)
        self.dirty.difference_update(partitions)
        if offsets and self.consumer is not None:
            try:  # for lag tools only: the checkpoint is what a worker resumes from
                await self.consumer.commit(offsets)
            except Exception as exc:  # e.g. a rebalance is under way
                log.debug("samples stage: offset commit skipped: %s", exc)

    async def _await_pending(self) -> None:
        """Wait for the outputs sent so far; a failed one stays pending, so no checkpoint can pass it."""
        pending = list(self._pending)
        if pending:
            await asyncio.gather(*pending)
        del self._pending[: len(pending)]

    async def load(self, partitions: Iterable[int]) -> dict[int, PartitionState]:
        """The newest checkpoint of each partition (the last record of its checkpoint partition)."""
        tps = [TopicPartition(self.checkpoint_topic, p) for p in partitions]
        if not tps:
            return {}
        reader = AIOKafkaConsumer(group_id=None, enable_auto_commit=False, **self.client_config)
        await reader.start()
        try:
            reader.assign(tps)
            ends = await reader.end_offsets(tps)
            found: dict[int, PartitionState] = {}
            for tp in tps:
                if ends[tp] > 0:
                    reader.seek(tp, ends[tp] - 1)
            waiting = {tp for tp in tps if ends[tp] > 0}
            while waiting:
                batches = await reader.getmany(*waiting, timeout_ms=1000)
                for tp, messages in batches.items():
                    for message in messages:
                        if message.value is not None:
                            found[tp.partition] = PartitionState.from_bytes(message.value)
                    if await reader.position(tp) >= ends[tp]:
                        waiting.discard(tp)
            return found
        finally:
            await reader.stop()

    async def on_assigned(self, assigned: set[TopicPartition]) -> None:
        consumer = self.consumer
        mine = sorted(tp.partition for tp in assigned if tp.topic == self.topic)
        loaded = await self.load([p for p in mine if p not in self.parts])
        for p in mine:
            if p in self.parts:
                continue
            state = loaded.get(p) or PartitionState(partition=p)
            self.parts[p] = state
            self.idle.take_over(p)
            if consumer is not None:
                tp = TopicPartition(self.topic, p)
                if p in loaded:
                    consumer.seek(tp, state.next_offset)
                else:
                    await consumer.seek_to_beginning(tp)
            log.info("samples[%d]: resuming at offset %d (%d hosts)", p, state.next_offset, len(state.hosts))

    async def on_revoked(self, revoked: set[TopicPartition]) -> None:
        mine = sorted(tp.partition for tp in revoked if tp.topic == self.topic and tp.partition in self.parts)
        async with self.lock:
            try:
                await self.checkpoint(mine)  # skips a torn partition: the next owner replays it
            except Exception as exc:  # the next owner resumes from the previous checkpoint
                log.warning("samples stage: checkpoint on revoke failed: %s", exc)
            for p in mine:
                self.parts.pop(p, None)
                self.dirty.discard(p)
                self.torn.discard(p)
                self.idle.forget(p)
