"""A detect worker's planner side: deciding each planner-topic message, and what its timer sends.

The planner agent and the timers in ``streams.agents`` only move bytes. This shell keeps the planning
state around the pure ``Planner``: one ``OrderedPlan`` per planner partition in event-time order,
the finding sources' times, and what was last sent. It also asks the consumer how far each
source partition this worker owns has been read.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from typing import Any, Protocol

from aiokafka.errors import KafkaError
from aiokafka.partitioner import murmur2

from streams.core.actions import Action
from streams.core.fleet.lifecycle import FleetState
from streams.core.messages import PlanProgress, PlanTick, SourceMark
from streams.core.planning.decide import decide
from streams.core.planning.order import OrderedPlan
from streams.core.planning.planner import Planner
from streams.core.planning.sources import SourceTimes
from streams.core.planning.ticks import TickSchedule
from streams.core.planning.writers import WriterMarks

log = logging.getLogger(__name__)

PROGRESS_KEEPALIVE_S = 10.0  # a planner that restarted hears every source again within this long
LIST_OFFSETS_TIMEOUT_S = 5.0


class SourceConsumer(Protocol):
    """What the shell reads of Faust's consumer."""

    def assignment(self) -> set[Any]: ...
    def highwater(self, tp: Any) -> int: ...
    async def highwaters(self, *partitions: Any) -> Mapping[Any, int]: ...


class PlannerShell:
    """Decides planner messages for this worker's partitions; works out progress marks and ticks.

    ``stage_of`` maps the finding sources' topic names to ``"errors"`` or ``"cluster"``.
    """

    def __init__(
        self,
        planner: Planner,
        held: MutableMapping[str, Any],
        *,
        size: Callable[[str], int],
        sources: frozenset[str],
        partitions: int,
        stage_of: Mapping[str, str],
        ordered: bool,
        quiet_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        domain_of: Callable[[str], str] | None = None,
        writers: WriterMarks | None = None,
    ) -> None:
        """``writers``: the declared writers' own progress (``streams.core.planning.writers``); None:
        marks come from what was read and the quiet rule alone."""
        self.planner = planner
        self.domain_of = domain_of
        self.held = held
        self.size = size
        self.sources = sources
        self.partitions = partitions
        self.stage_of = dict(stage_of)
        self.ordered = ordered
        self.quiet_s = quiet_s
        self.clock = clock
        self.source_times = SourceTimes()
        self.plans: dict[int, OrderedPlan] = {}
        self._marks_sent: tuple[Any, ...] = ()
        self._marks_sent_at = 0.0
        self._ticks = TickSchedule(planner, size)
        self._listed: dict[Any, int] = {}  # end offsets asked of the broker for partitions not fetched yet
        self._quiet: dict[Any, tuple[int | None, float]] = {}  # partition -> (last handled, caught up since)
        self.writers = writers
        self._owned_errors: list[Any] = []  # as of the last progress (``writer_reported``)
        self._committed: Mapping[Any, int | None] = {}
        self.nudged = asyncio.Event()  # set when a writer's report may move a mark: send progress now
        self.sending = asyncio.Lock()  # one progress computation at a time (the timer and the nudges)
        if writers is not None:
            self.source_times.on_done = self._errors_done

    def partition_of(self, key: str) -> int:
        """The internal partition a domain's planner messages, or a cluster's summaries, go to (Kafka's
        default partitioner, as Faust and the samples stage send; both topics have ``partitions``)."""
        return (murmur2(key.encode()) & 0x7FFFFFFF) % self.partitions

    def plan_of(self, partition: int) -> OrderedPlan:
        plan = self.plans.get(partition)
        if plan is None:
            plan = self.plans[partition] = OrderedPlan(
                self.planner,
                self.sources,
                self.held,
                size=self.size,
                owns=lambda domain: self.partition_of(domain) == partition,
                domain_of=self.domain_of,
            )
        return plan

    def decide(self, fleet: FleetState, msg: Any, partition: int) -> list[Action]:
        """The actions for one planner-topic message (``streams.core.planning.decide``: in event-time
        order or as they come, each escalation followed by the host's retirement when the policy says so)."""
        return decide(self.planner, self.plan_of(partition) if self.ordered else None, fleet, msg, self.size)

    def settle(self, partition: int) -> None:
        """The actions of the last message of ``partition`` are in the log: drop what they decided."""
        plan = self.plans.get(partition)
        if plan is not None:
            plan.settle()

    async def progress(
        self,
        consumer: SourceConsumer,
        handled: Mapping[tuple[str, int], int],
        committed: Mapping[Any, int | None],
        *,
        upstream_quiet: bool = True,
        clusters: Iterable[str] | None = None,
    ) -> PlanProgress | None:
        """The marks of the source partitions this worker owns, or None when nothing is worth sending.

        Sent when a mark changed, and every ``PROGRESS_KEEPALIVE_S`` for planners that restarted.
        ``handled`` is the last offset handled per (topic, partition) since assignment; ``committed``
        the offsets the group had committed when the partitions were assigned. A source is idle once
        it has been caught up, with nothing new handled, for ``quiet_s``: a finding of another source
        still in flight (a producer's retry, a stage's next batch) gets that long to arrive. A cluster
        source is idle only while the samples feeding it are caught up too: ``upstream_quiet`` (this
        worker's samples stage is), or every samples partition has declared itself idle to every
        cluster the source carries (``SourceTimes.upstream_idle``; a worker owning no samples
        partition has only that), or no cluster feeds it: ``clusters`` (every cluster of the
        inventory, once it has been read to its end) has none whose summaries go to its partition,
        and it has carried none.
        """
        owned = sorted(tp for tp in consumer.assignment() if tp.topic in self.stage_of)
        await self._list_unfetched(consumer, owned)
        fed = None if clusters is None else {self.partition_of(c) for c in clusters}
        read: dict[str, list[tuple[int, bool]]] = {"errors": [], "cluster": []}
        for tp in owned:
            stage = self.stage_of[tp.topic]
            quiet = (
                stage == "errors"
                or upstream_quiet
                or self.source_times.upstream_idle(tp.partition)
                or (
                    fed is not None
                    and tp.partition not in fed
                    and not self.source_times.clusters.get(tp.partition)
                )
            )
            caught_up = self._caught_up(consumer, tp, handled, committed) and quiet
            read[stage].append(
                (tp.partition, self._idle(tp, handled.get((tp.topic, tp.partition)), caught_up))
            )
        marks = self.source_times.marks(
            read["errors"], read["cluster"], self._writers_passed(owned, committed)
        )
        now = time.monotonic()
        if not marks or (
            tuple(marks) == self._marks_sent and now - self._marks_sent_at < PROGRESS_KEEPALIVE_S
        ):
            return None
        self._marks_sent, self._marks_sent_at = tuple(marks), now
        return PlanProgress([SourceMark(source, m.ts, m.idle) for source, m in marks])

    def writer_reported(self) -> None:
        """A declared writer's report arrived: its partition's mark may move.

        The progress goes at once, unless a report waits for a record this worker has still to
        handle: then it goes when that record is (``_errors_done``), once instead of twice (each time
        a message on every planner partition, which the planner catches up on its logs for).
        """
        if self.writers is not None and any(
            self.writers.ahead(tp.topic, tp.partition, self._done(tp, self._committed))
            for tp in self._owned_errors
        ):
            return
        self.nudged.set()

    def _errors_done(self, partition: int, offset: int) -> None:
        if self.writers is not None and any(
            self.writers.waiting(topic, partition, offset)
            for topic, stage in self.stage_of.items()
            if stage == "errors"
        ):
            self.nudged.set()

    def _writers_passed(self, owned: list[Any], committed: Mapping[Any, int | None]) -> dict[int, int]:
        """Per errors partition owned, the time its declared writers have passed (none declared: empty)."""
        if self.writers is None:
            return {}
        self._owned_errors = [tp for tp in owned if self.stage_of[tp.topic] == "errors"]
        self._committed = committed
        out: dict[int, int] = {}
        for tp in self._owned_errors:
            passed = self.writers.passed(tp.topic, tp.partition, self._done(tp, committed))
            if passed is not None:
                out[tp.partition] = passed
        return out

    def _done(self, tp: Any, committed: Mapping[Any, int | None]) -> int | None:
        """The last offset of an errors partition whose findings are sent (before the commit: by an earlier owner)."""
        before = committed.get(tp)
        return _latest(self.source_times.done.get(tp.partition), None if before is None else before - 1)

    def revoked(self, partitions: Iterable[Any]) -> None:
        """Forget what was seen of partitions this worker no longer owns.

        Back after a rebalance, a partition is quiet again only after ``quiet_s`` from then, and its
        end is asked of the broker again: an earlier ownership's answers are out of date.
        """
        for tp in partitions:
            self._quiet.pop(tp, None)
            self._listed.pop(tp, None)
            if self.stage_of.get(tp.topic) == "cluster":
                self.source_times.forget_upstream(tp.partition)

    async def _list_unfetched(self, consumer: SourceConsumer, owned: list[Any]) -> None:
        """Ask the broker for the end of partitions the consumer has no fetch answer for yet.

        Without it a partition Faust has not fetched (paused, or quiet since assignment) would
        never count as caught up, and would hold every finding back.
        """
        unknown = [tp for tp in owned if _highwater(consumer, tp) is None]
        if not unknown:
            return
        try:
            self._listed.update(await asyncio.wait_for(consumer.highwaters(*unknown), LIST_OFFSETS_TIMEOUT_S))
        except (TimeoutError, KafkaError) as exc:
            log.debug("end offsets of %d partitions not known yet: %s", len(unknown), type(exc).__name__)

    def _idle(self, tp: Any, last: int | None, caught_up: bool) -> bool:
        """Caught up, with the same last record handled, for ``quiet_s``."""
        now = self.clock()
        if not caught_up:
            self._quiet.pop(tp, None)
            return False
        seen = self._quiet.get(tp)
        if seen is None or seen[0] != last:
            self._quiet[tp] = (last, now)
            return self.quiet_s <= 0
        return now - seen[1] >= self.quiet_s

    def _caught_up(
        self,
        consumer: SourceConsumer,
        tp: Any,
        handled: Mapping[tuple[str, int], int],
        committed: Mapping[Any, int | None],
    ) -> bool:
        """Whether every record of ``tp`` the broker has was handled (False while that is unknown)."""
        high = _highwater(consumer, tp)
        if high is None:
            high = self._listed.get(tp)
        if high is None:
            return False
        last = handled.get((tp.topic, tp.partition))
        if last is None:
            before = committed.get(tp)
            return high == 0 or (before is not None and before >= high)
        return last + 1 >= high

    def ticks(self, fleet: FleetState, watermark: int) -> list[PlanTick]:
        """Ticks for the domains whose work changed since their last tick (arrival order only)."""
        out: list[PlanTick] = []
        self._ticks.tick(fleet, watermark, lambda domain: out.append(PlanTick(domain, watermark)))
        return out


def _highwater(consumer: SourceConsumer, tp: Any) -> int | None:
    try:
        return consumer.highwater(tp)
    except Exception:  # not assigned any more
        return None


def _latest(*values: int | None) -> int | None:
    return max((v for v in values if v is not None), default=None)
