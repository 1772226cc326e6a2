"""The detection pipeline wired once, in one process: records with event times in, findings and actions out.

validate -> classify -> repeat fold (errors, ``stages.repeat_step``) | sample folding (``SampleFolder``)
-> peer comparison (``stages.peer_step``) -> planner over the lifecycle fold (``OrderedPlan`` in event-time
order, or ``Planner`` ticks in arrival order). The backtest and the twin drive it record by record, or with
runs of valid samples as column batches (``samples``); the live worker runs the same steps in its agents,
one stage per topic. One source partition, event time only, state in a ``CoreState``: the same records
and policy give the same findings and actions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from ground.settings.detect import PlanOrder
from schemas import HostSampled
from streams.core.actions import Action
from streams.core.classify import Signal, classify
from streams.core.errors import InvalidRecordError
from streams.core.findings import Finding
from streams.core.fleet.lifecycle import FleetState, apply_logged
from streams.core.inventory import Inventory
from streams.core.messages import PlanFinding, PlannerMessage, PlanProgress, PlanTick, SourceMark
from streams.core.peers.messages import ClusterItem
from streams.core.peers.stage import ClusterStage
from streams.core.planning.admission import route
from streams.core.planning.decide import decide
from streams.core.planning.order import OrderedPlan, all_sources
from streams.core.planning.planner import Planner
from streams.core.planning.sources import SourceTimes
from streams.core.planning.ticks import TickSchedule
from streams.core.policy import Policy
from streams.core.samples.checkpoint import PartitionState
from streams.core.samples.columns import SampleColumns
from streams.core.samples.folder import SampleFolder
from streams.core.stages import peer_step, repeat_step
from streams.core.state import CoreState
from streams.core.validate import check, reason_label

# Event time between two planner ticks (the live worker ticks every second of wall time).
DEFAULT_TICK_MS = 60_000
BUNDLE = 2_000  # cluster-stage messages sent as one bundle per cluster (the worker bundles per fetched batch)
PARTITION = 0  # one ordered source: one samples partition and one errors partition


class DetectionCore:
    """One policy's detectors and planner over an ordered stream of records (state in a ``CoreState``)."""

    def __init__(
        self,
        policy: Policy,
        inventory: Inventory,
        *,
        state: CoreState | None = None,
        tick_ms: int = DEFAULT_TICK_MS,
        plan_order: PlanOrder = "event_time",
    ) -> None:
        self.policy = policy
        self.tick_ms = tick_ms
        self.inventory = inventory
        self.state = state or CoreState()
        self.fleet = FleetState()
        self.planner = Planner(policy, members=inventory.hosts_in)
        self.ordered = (
            OrderedPlan(
                self.planner, all_sources(1, 1), {}, size=inventory.domain_size, domain_of=inventory.domain_of
            )
            if plan_order == "event_time"
            else None
        )
        self.times = SourceTimes()
        self.ticks = TickSchedule(self.planner, inventory.domain_size, skip_unchanged=True)
        self.sampled = False  # a cluster source with no sample yet holds nothing back
        self._front(policy)
        self.findings: list[Finding] = []
        self.actions: list[Action] = []
        self.replayed: Counter[str] = Counter()  # event type -> records folded
        self.rejected: Counter[str] = Counter()  # reason -> records refused
        self.late: Counter[str] = Counter()  # stage -> records too late to count
        self.offset = 0
        self.watermark: int | None = None
        self.next_tick: int | None = None
        self.pending: list[ClusterItem] = []  # cluster-stage messages not sent yet

    def _front(self, policy: Policy) -> None:
        """The stages before the repeat fold and the planner, built from what they read of ``policy``.

        Nothing built here reads the planner, the fleet or the repeat state, so runs whose policies
        agree on what these stages read share them (``fleetpulse.backtest.shared``).
        """
        self.folder = SampleFolder(policy, 1, self.inventory.clusters)
        self.partition = PartitionState(PARTITION)
        self.cluster_stage = ClusterStage(policy.slow_host)

    # -- the stream -------------------------------------------------------------------------------

    def wake_at(self, times: Iterable[int]) -> None:
        """Event times at which hosts come back by themselves (outages ending): arrival-order ticks wake then."""
        self.ticks.wake_at(times)

    def logged(self, record: dict[str, Any]) -> None:
        """A record of ``fleet.actions`` the planner did not write (an incident, an operator's step)."""
        apply_logged(self.fleet, record)

    def step(self, record: dict[str, Any]) -> None:
        """One error or sample, read at the next offset of the one source partition."""
        ts = record["ts"]
        self._read(ts)
        try:
            check(
                record, self.policy.validation, ts
            )  # no wall clock: a record is never ahead of its own time
        except InvalidRecordError as exc:
            self.rejected[reason_label(exc)] += 1
            return
        self.replayed[record["event_type"]] += 1
        if record["event_type"] == HostSampled.EVENT_TYPE:
            self._sample(SampleColumns.of_records([record]), 0)
        else:
            self._error(record)
            self.times.errors_read(PARTITION, ts)

    def samples(self, cols: SampleColumns, lo: int = 0, hi: int | None = None) -> None:
        """Rows ``lo:hi`` of a batch of valid samples, read at the next offsets (as ``step`` of each).

        Folded in stretches between two ticks: only a stretch's first row may tick (``_read``), so its
        rows are read, then folded together.
        """
        hi = len(cols) if hi is None else hi
        self.replayed[HostSampled.EVENT_TYPE] += max(0, hi - lo)
        ts = cols.ts
        i = lo
        while i < hi:
            before = self.watermark
            self._read(ts[i])
            end, tick = i + 1, self.next_tick
            assert tick is not None  # set by _read
            while end < hi and ts[end] < tick:
                end += 1
            if (
                end > i + 1
            ):  # ``_read`` of each of these rows: none ticks, so only the offset and watermark move
                self.offset += end - i - 1
                top = max(ts[i + 1 : end])
                self.watermark = top if self.watermark is None or top > self.watermark else self.watermark
            self._fold(cols, i, end, before)
            i = end

    def _fold(self, cols: SampleColumns, lo: int, hi: int, before: int | None) -> None:
        """Rows ``lo:hi``, read already (the watermark was ``before`` them), as ``_sample`` of each: a bundle is
        flushed once full, with the offset and watermark of the row that filled it."""
        self.sampled = True
        last, newest = self.offset, self.watermark
        first = lo
        while lo < hi:
            nxt, late = self.folder.fold_rows(self.partition, cols, lo, hi, self.pending, limit=BUNDLE)
            if late:
                self.late["samples"] += late
            if len(self.pending) >= BUNDLE:
                self.offset = last - (hi - nxt)  # the bundle's id
                read = max(cols.ts[first:nxt])
                self.watermark = read if before is None else max(before, read)
                self._flush()
            lo = nxt
        self.offset, self.watermark = last, newest

    def _read(self, ts: int) -> None:
        """A record at event time ``ts`` is read: tick first if it starts a new tick, then move the offset."""
        if self.next_tick is not None and ts >= self.next_tick:
            self._flush()
            self.tick()
        self.watermark = ts if self.watermark is None else max(self.watermark, ts)
        if self.next_tick is None or ts >= self.next_tick:
            self.next_tick = (ts // self.tick_ms + 1) * self.tick_ms
        self.offset += 1

    def _error(self, record: dict[str, Any]) -> None:
        self._flush()  # samples before this error reach the planner before it does
        self._repeat(classify(record, self.policy))

    def _repeat(self, signal: Signal | None) -> None:
        """A classified error (read at the current offset) through the repeat rules, a finding to the planner."""
        step = repeat_step(self.state.repeat, signal, (PARTITION, self.offset), self.policy)
        if step.late:
            self.late["errors"] += 1
        if step.finding is not None:
            self._plan(step.finding)

    def _sample(self, cols: SampleColumns, i: int) -> None:
        self._fold(cols, i, i + 1, self.watermark)

    def _flush(self) -> None:
        """The pending messages to the cluster stage, one bundle per cluster in source order (as the worker's batches)."""
        messages, self.pending = self.pending, []
        bundles: dict[str, list[ClusterItem]] = {}
        for message in messages:
            bundles.setdefault(message.cluster, []).append(message)
        for cluster, items in bundles.items():
            step = peer_step(
                self.cluster_stage, self.state.clusters, cluster, items, str(self.offset), replayable=False
            )
            if step.late:
                self.late["cluster"] += step.late
            for finding in step.findings:
                self._plan(finding)
            self.times.cluster_read(PARTITION, cluster, step.floor)

    # -- the planner ------------------------------------------------------------------------------

    def _plan(self, finding: Finding) -> None:
        self.findings.append(finding)
        way = route(finding.to_record(), self.inventory.domain_of)
        if way.domain is None:
            self.rejected[str(way.refused).split(":", 1)[0]] += 1
            return
        self._decide(PlanFinding(way.domain, finding.to_record()))

    def _decide(self, msg: PlannerMessage) -> None:
        """One planner message, as the worker's planner shell decides it (retirement included)."""
        self.actions += decide(self.planner, self.ordered, self.fleet, msg, self.inventory.domain_size)

    def advance(self, ts: int) -> None:
        """Event time reaches ``ts`` with no record (a runner's own clock, as the twin's): tick there."""
        self.watermark = ts if self.watermark is None else max(self.watermark, ts)
        self.tick()

    def tick(self) -> None:
        """Move every domain with work due at the watermark, as ``PlannerShell.ticks`` and the planner agent do."""
        if self.ordered is not None:
            self._progress(idle=False)
            return
        wm = self.watermark
        if wm is not None:
            self.ticks.tick(self.fleet, wm, lambda domain: self._reconcile(domain, wm))

    def _reconcile(self, domain: str, now: int) -> None:
        self._decide(PlanTick(domain, now))

    def _progress(self, *, idle: bool) -> None:
        """Both sources' progress to the ordered planner, as a worker's timer sends it."""
        assert self.ordered is not None
        marks = self.times.marks([(PARTITION, idle)], [(PARTITION, idle or not self.sampled)])
        self._decide(PlanProgress([SourceMark(source, m.ts, m.idle) for source, m in marks]))
        self.ordered.settle()  # actions are kept as soon as they are decided

    def close(self) -> None:
        """The source goes idle (every window its data passed closes), then a last tick."""
        self.pending += self.folder.progress(self.partition, "idle")
        self._flush()
        self._last_tick()

    def _last_tick(self) -> None:
        """The planner's tick once the source is idle."""
        if self.ordered is not None:
            self._progress(idle=True)  # the end of the stream: every held finding is decided
        else:
            self.tick()
