"""A detect worker's planner side: deciding each planner-topic message, and what its timer sends.

The planner agent and the timers in ``streams.agents`` only move bytes. This shell keeps the planning
state around the pure ``Planner``: one ``OrderedPlan`` per planner partition in event-time order,
the finding sources' times, and what was last sent. It also asks the consumer how far each
source partition this worker owns has been read.

What holds a finding back (event-time order), and for how long. A finding is decided once every
source that is not idle has passed its time. The newest finding of a burst has no later record
behind it on any source, so no source's time ever passes it: it waits until every source is idle,
that is caught up with nothing new for ``quiet_s`` (``detect.plan_quiet_s``, 1 s), counted from
the first look that saw its own source caught up. Marks are looked at every ``LOOK_S`` (0.05 s), so
a page waits ``quiet_s`` plus at most two looks, then the planner's own path. A look sends the marks
at once when a source turned idle or busy; when only times moved (sources busy), at most every
``TIMES_EVERY_S``: each send is a message on every planner partition. While a cluster source is busy (samples flowing), its time trails the samples' event
time (``cluster_floor``): a finding waits up to a window plus the grace of event time (10 minutes).

The quiet time is a grace for records another producer has in flight at about the same wall time:
a producer's retry after a broker restart or a leader change. Tried: 0.25 s, which met a 0.5 s page
p99 on bench_detect, but the poison scenario's strict comparison lost 8 actions in one of three runs
(its reference run's producer retried NotLeaderForPartition on three errors partitions): a retry
takes longer than that, so the default stays 1 s. The samples stage's own bundle in flight is not
left to the grace: a cluster source is not idle while that stage is folding a batch
(``upstream_caught_up``). Rejected: releasing on the instant a source is caught up (lost exact
actions in three fault scenarios), and waiting only for every source's time to pass (never releases
the newest finding while the fleet is quiet). The rule is deterministic for a given clock (injected).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Collection, Iterable, Mapping, MutableMapping
from typing import Any, Protocol

from aiokafka.errors import KafkaError
from aiokafka.partitioner import murmur2

from streams.core.actions import Action
from streams.core.fleet.lifecycle import FleetState
from streams.core.messages import PlanProgress, PlanTick, SourceMark
from streams.core.planning.decide import decide
from streams.core.planning.order import Mark, OrderedPlan
from streams.core.planning.planner import Planner
from streams.core.planning.sources import SourceTimes
from streams.core.planning.ticks import TickSchedule

log = logging.getLogger(__name__)

PROGRESS_KEEPALIVE_S = 10.0  # a planner that restarted hears every source again within this long
LIST_OFFSETS_TIMEOUT_S = 5.0
LOOK_S = 0.05  # marks are looked at this often: a source's quiet time is seen to end within it
TIMES_EVERY_S = 0.25  # marks whose times only moved are sent at most this often


def upstream_caught_up(lag: Iterable[tuple[str, int, int]], folding: Collection[int]) -> bool:
    """Whether the samples stage has handed on everything it read: every partition it owns read to
    its end (``lag``), and no batch half folded (``folding``: its summaries are not sent yet)."""
    behind = [n for _, _, n in lag]
    return bool(behind) and not any(behind) and not folding


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
    ) -> None:
        self.planner = planner
        self.domain_of = domain_of
        self.held = held
        self.size = size
        self.sources = sources
        self.partitions = partitions
        self.stage_of = dict(stage_of)
        self.ordered = ordered
        self.quiet_s = quiet_s
        self.look_s = LOOK_S
        self.clock = clock
        self.source_times = SourceTimes()
        self.plans: dict[int, OrderedPlan] = {}
        self._marks_sent: tuple[Any, ...] = ()
        self._marks_sent_at = 0.0
        self._ticks = TickSchedule(planner, size)
        self._listed: dict[Any, int] = {}  # end offsets asked of the broker for partitions not fetched yet
        self._quiet: dict[Any, tuple[int | None, float]] = {}  # partition -> (last handled, caught up since)

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

    def needs_fleet(self, msg: Any, partition: int) -> bool:
        """Whether deciding ``msg`` reads the fleet state: all but progress marks that release nothing
        (``OrderedPlan.may_release``), most of them while a source is busy. The planner agent brings
        the fleet state up to date (a broker round trip per log) only for the others."""
        if not (self.ordered and isinstance(msg, PlanProgress)):
            return True
        return self.plan_of(partition).may_release((m.source, Mark(m.ts, m.idle)) for m in msg.marks)

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
        marks = self.source_times.marks(read["errors"], read["cluster"])
        now = self.clock()
        if not marks or (
            tuple(marks) == self._marks_sent and now - self._marks_sent_at < PROGRESS_KEEPALIVE_S
        ):
            return None
        idle = [(source, m.idle) for source, m in marks]
        if (
            idle == [(source, m.idle) for source, m in self._marks_sent]
            and now - self._marks_sent_at < TIMES_EVERY_S
        ):
            return None  # only times moved (sources busy): at most every TIMES_EVERY_S, each a planner round
        self._marks_sent, self._marks_sent_at = tuple(marks), now
        return PlanProgress([SourceMark(source, m.ts, m.idle) for source, m in marks])

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
