"""The archiver: Kafka topics → the Delta lake, exactly once per Kafka partition, resumable after any crash.

A thin shell around ``plan_batch`` and ``Publisher`` (its Kafka side in ``analytics.lake.source``): it
assigns every partition of the archived topics (or its share of them, ``analytics.lake.members``), reads
where each resumes from the ``_offsets`` table's app-transaction versions, seeks there and flushes by
records / bytes / seconds. Group offsets are committed too, for lag dashboards only.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from kafka.errors import KafkaError

from analytics.errors import ArchiverError
from analytics.lake import offsets, source
from analytics.lake.batch import plan_batch
from analytics.lake.layout import TopicPartition
from analytics.lake.members import CATCH_UP_S, InventoryWatch, owned, read_to_end
from analytics.lake.publish import Clock, PublishedBatch, Publisher, utc_now
from analytics.lake.reader import Lake
from analytics.lake.records import ConsumedRecord
from analytics.lake.stored import StoredIds, rederived_types, stamped_types
from analytics.quality.gate import QualityGate
from ground.delta import DeltaTables
from ground.errors import LakeStorageError
from ground.private_files import private_dir
from schemas import Codec

if TYPE_CHECKING:
    from ground.settings import Settings

log = logging.getLogger(__name__)

LAKE_RETRY_S = 5.0  # between attempts to resume after the lake refused a write


@dataclass
class ArchiveStats:
    batches: int = 0
    records: int = 0
    published_rows: int = 0
    quarantined_rows: int = 0
    rejected_rows: int = 0
    repeats: int = 0  # records whose event id the batch or the lake already held, archived once
    replayed_rows: int = 0  # rows a table already held from before a crash, not written again
    commits: int = 0
    lag: int | None = None
    elapsed_s: float = 0.0
    last_flush_s: float = 0.0  # the last flush's write, from its plan to its commit


def archived_topics(settings: Settings) -> dict[str, str]:
    """Topic name → family for the families the lake archives."""
    return {getattr(settings.topics, family).name: family for family in settings.lake.families}


class Archiver:
    """Consumes the fleet topics into one lake. ``run`` returns when told to stop, idle or out of time."""

    def __init__(
        self,
        settings: Settings,
        *,
        lake: DeltaTables | None = None,
        clock: Clock = utc_now,
        gate: QualityGate | None = None,
        consumer_factory: Callable[..., Any] | None = None,
        resplit: bool = False,
    ) -> None:
        """``resplit``: ``lake.members`` may differ from the split the lake recorded (every old member has stopped)."""
        self.settings = settings
        self.resplit = resplit
        self._private_lake = lake is None and "://" not in str(settings.lake.path)
        self.lake = lake or DeltaTables(
            settings.lake.path,
            settings.lake.storage_options,
            compression=settings.lake.compression,
            row_group_size=settings.lake.row_group_size,
        )
        self.clock = clock
        self.gate = gate
        self.codec = Codec()
        self._consumer_factory = consumer_factory
        self.topics = archived_topics(settings)
        inventory = settings.topics.inventory.name
        self._inventory_topic = inventory if inventory in self.topics else None
        self._retention = source.RetentionWatch()
        self._watch: InventoryWatch | None = None  # the inventory partitions other members archive
        self._stored = StoredIds()  # ids already in the lake: a copy sent again in a later batch is a repeat

    # -- set-up -------------------------------------------------------------------------------

    def prepare_lake(self) -> None:
        """A local lake's folder, 0700 (it holds the fleet's whole history): made once the topics are
        there, so a run that stops for a missing topic writes nothing."""
        if self._private_lake:
            private_dir(Path(self.settings.lake.path).expanduser())

    def _start(self, consumer: Any, tps: list[Any]) -> Publisher:
        """Read each partition's committed offset, give new partitions a starting point, seek there."""
        self.prepare_lake()
        group = self.settings.lake.group_id
        frontier = offsets.resume_offsets(
            self.lake, group, [TopicPartition(tp.topic, tp.partition) for tp in tps]
        )
        begin = consumer.beginning_offsets(tps)
        start = offsets.start_offsets(
            begin, consumer.end_offsets(tps), self.settings.lake.start_from, self._inventory_topic
        )
        new = {
            TopicPartition(tp.topic, tp.partition): start[tp]
            for tp in tps
            if TopicPartition(tp.topic, tp.partition) not in frontier
        }
        members = self.settings.lake.members
        recorded = offsets.check_split(self.lake, group, members, resplit=self.resplit)
        frontier.update(new)
        latest = consumer.end_offsets(tps)
        self._retention = source.RetentionWatch()  # each (re)start reports what it finds lost once
        lost = offsets.lost_to_retention(
            frontier, {TopicPartition(tp.topic, tp.partition): begin[tp] for tp in tps}
        )
        for tp in tps:
            committed = frontier[TopicPartition(tp.topic, tp.partition)]
            if committed > latest[tp]:
                raise ArchiverError(
                    f"{tp.topic}[{tp.partition}] ends at offset {latest[tp]} but the lake has archived it up to "
                    f"{committed}: the topic was recreated or the lake belongs to another cluster; archive into a "
                    "new lake path",
                    tp.topic,
                )
            consumer.seek(tp, max(committed, begin[tp]))
        # new partitions get a starting point before any data (a crash before the first flush resumes from
        # there, not from `latest` again); a new split is recorded at once, with every partition's place
        if marks := (new if recorded == members else frontier):
            offsets.commit(self.lake, group, dict.fromkeys(marks), marks, self.clock(), members)
        self._retention.report(lost)
        source.mirror_offsets(consumer, tps, frontier)
        families = self.topics.values()
        window_ms = int(self.settings.lake.resend_window_s * 1000)
        self._stored.load(
            Lake(self.lake), rederived_types(families), stamped_types(families), window_ms=window_ms
        )
        quality = self.settings.lake.quality
        known = Lake(self.lake).known_hosts() if quality.enabled and quality.check_known_hosts else None
        if known is not None and self._watch is not None:
            known |= self._watch.catch_up()
        if known is not None and self._inventory_topic is None and not known:
            log.warning(
                "known-host check off: the inventory topic is not archived and the lake has no inventory"
            )
            known = None
        gate = self.gate
        if gate is None and quality.enabled:
            gate = QualityGate(future_tolerance_s=quality.future_tolerance_s)
        return Publisher(
            self.lake, self.settings.lake, frontier, gate=gate, known_hosts=known, clock=self.clock
        )

    # -- the loop -----------------------------------------------------------------------------

    def run(
        self,
        *,
        until_idle: bool = False,
        max_seconds: float | None = None,
        stop: threading.Event | None = None,
        on_batch: Callable[[PublishedBatch, ArchiveStats], None] | None = None,
    ) -> ArchiveStats:
        """Archive until ``stop`` is set, ``max_seconds`` pass, or (``until_idle``) every partition is caught up."""

        started = time.monotonic()
        stats = ArchiveStats()
        consumer = source.open_consumer(self.settings, self._consumer_factory)
        try:
            found = source.topic_partitions(consumer, self.topics, self.settings)
            tps = owned(found, member=self.settings.lake.member, members=self.settings.lake.members)
            self._watch_inventory([tp for tp in found if tp.topic == self._inventory_topic and tp not in tps])
            consumer.assign(tps)
            publisher = self._start(consumer, tps)
            self._loop(consumer, tps, publisher, stats, until_idle, max_seconds, stop, on_batch, started)
        except KafkaError as exc:
            raise ArchiverError(
                f"Kafka failed while archiving from {self.settings.bootstrap_servers}: {exc}"
            ) from exc
        finally:
            consumer.close(autocommit=False)
            if self._watch is not None:
                self._watch.close()
                self._watch = None
            stats.elapsed_s = time.monotonic() - started
        return stats

    def _watch_inventory(self, others: list[Any]) -> None:
        """Read the inventory partitions other members archive, for the known-host gate."""
        quality = self.settings.lake.quality
        if others and quality.enabled and quality.check_known_hosts:
            consumer = source.open_consumer(self.settings, self._consumer_factory, in_group=False)
            self._watch = InventoryWatch(consumer, others, self.codec)

    def _loop(
        self,
        consumer: Any,
        tps: list[Any],
        publisher: Publisher,
        stats: ArchiveStats,
        until_idle: bool,
        max_seconds: float | None,
        stop: threading.Event | None,
        on_batch: Callable[[PublishedBatch, ArchiveStats], None] | None,
        started: float,
    ) -> None:
        lake = self.settings.lake
        buffer: list[ConsumedRecord] = []
        size = 0
        first_at = 0.0
        while True:
            room = max(1, min(lake.max_poll_records, lake.flush_records - len(buffer)))
            polled = consumer.poll(timeout_ms=lake.poll_timeout_ms, max_records=room)
            for messages in polled.values():
                for m in messages:
                    if not buffer:
                        first_at = time.monotonic()
                    buffer.append(ConsumedRecord.of(m))
                    size += len(m.value or b"")
            finishing = (stop is not None and stop.is_set()) or (
                max_seconds is not None and time.monotonic() - started >= max_seconds
            )
            if until_idle and not polled and not finishing:
                end = consumer.end_offsets(tps)
                finishing = all(consumer.position(tp) >= end[tp] for tp in tps)
            due = len(buffer) >= lake.flush_records or size >= lake.flush_bytes
            due = due or (bool(buffer) and time.monotonic() - first_at >= lake.flush_seconds)
            if buffer and (due or finishing):
                try:
                    self._flush(consumer, tps, publisher, buffer, stats, on_batch)
                except LakeStorageError as exc:
                    publisher = self._resume_after(exc, consumer, tps, stop)
                buffer, size = [], 0
                # Arrow's mimalloc pool keeps a flush's freed pages (~80 MB at 100,000 records) until it reuses them
                pa.default_memory_pool().release_unused()
            if finishing:
                return

    def _resume_after(
        self, exc: LakeStorageError, consumer: Any, tps: list[Any], stop: threading.Event | None
    ) -> Publisher:
        """The lake refused a write (a full disk): wait, then go on from what the lake holds, as a restart would.

        The batch is dropped and read again from the lake's offsets; rows a table already took are
        left out of the replay, so nothing is lost or doubled. Set ``stop`` ends the wait with the error.
        """
        while True:
            log.warning("%s; resuming from the lake's offsets in %.0f s", exc, LAKE_RETRY_S)
            if stop is not None and stop.wait(LAKE_RETRY_S):
                raise exc
            if stop is None:
                time.sleep(LAKE_RETRY_S)
            try:
                return self._start(consumer, tps)
            except LakeStorageError as again:
                exc = again

    def _flush(
        self,
        consumer: Any,
        tps: list[Any],
        publisher: Publisher,
        buffer: list[ConsumedRecord],
        stats: ArchiveStats,
        on_batch: Callable[[PublishedBatch, ArchiveStats], None] | None,
    ) -> None:
        began = time.monotonic()
        buffer.extend(self._inventory_catch_up(consumer, tps))
        plan = plan_batch(buffer, self.codec, stored=self._stored)
        buffer.clear()  # the plan holds what it needs; the raw records need not live through the write
        self._retention.check(consumer, publisher.frontier, plan)
        if self._watch is not None and publisher.known_hosts is not None:
            publisher.known_hosts |= self._watch.catch_up()
        done = publisher.publish(plan)
        self._stored.stored(plan.event_ids)  # committed: from now on a copy of these is a repeat
        stats.batches += 1
        stats.records += done.plan.records
        stats.published_rows += done.published_rows
        stats.quarantined_rows += done.quarantined_rows
        stats.rejected_rows += done.rejected_rows
        stats.repeats += plan.repeats
        stats.replayed_rows += done.replayed_rows
        stats.commits += done.commits
        stats.last_flush_s = time.monotonic() - began
        source.mirror_offsets(consumer, tps, publisher.frontier)
        try:
            end = consumer.end_offsets(tps)
            stats.lag = sum(max(0, end[tp] - consumer.position(tp)) for tp in tps)
        except Exception:  # lag is for display only
            stats.lag = None
        if on_batch is not None:
            on_batch(done, stats)

    def _inventory_catch_up(self, consumer: Any, tps: list[Any]) -> list[ConsumedRecord]:
        """Read the inventory topic up to its current end before a flush (with whatever else comes: this batch's).

        Agents send their inventory before their samples, so once the inventory is read up to
        now, every host in the batch is known and the known-host gate cannot fire on a race.
        The other partitions are not paused meanwhile: kafka-python 3.0.12 can park a paused
        partition's fetched records and never fetch that partition again after ``resume`` (its
        KAFKA-7548 port restores parked records only when no exhausted record set is in line).
        """
        inventory = [tp for tp in tps if tp.topic == self._inventory_topic]
        quality = self.settings.lake.quality
        if not inventory or not (quality.enabled and quality.check_known_hosts):
            return []
        return [ConsumedRecord.of(m) for m in read_to_end(consumer, inventory, CATCH_UP_S)]
