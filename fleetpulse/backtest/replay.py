"""The detectors and the planner run offline: a lake's history folded through the live workers' own functions.

Errors go through ``classify`` and ``fold_host`` (repeat offenders), samples through ``SampleFolder``
(host windows) and ``ClusterStage`` (peer comparison), findings through ``Planner`` over a
``FleetState`` that also folds the lake's incidents and operators' steps. Findings are decided as the
live planner decides them (``detect.plan_order``): in event-time order once both sources (errors, and
the cluster stage's closed windows) have passed them, or as they come. Everything is held in plain
dicts, one source partition, event time only: the same history and policy give the same output.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from fleetpulse.backtest.events import History, Record
from ground.settings.detect import PlanOrder
from schemas import HostSampled
from streams.core.actions import Action
from streams.core.classify import classify
from streams.core.errors import InvalidRecordError
from streams.core.findings import Finding
from streams.core.fleet.lifecycle import FleetState, apply_logged
from streams.core.fleet.outages import change_times
from streams.core.inventory import Inventory
from streams.core.peers.messages import ClusterItem
from streams.core.peers.stage import ClusterStage
from streams.core.planning.order import OrderedPlan, all_sources
from streams.core.planning.planner import Planner, unplannable
from streams.core.planning.sources import SourceTimes, cluster_floor
from streams.core.planning.ticks import TickSchedule
from streams.core.policy import Policy
from streams.core.repeat import HostState, fold_host
from streams.core.samples.checkpoint import PartitionState
from streams.core.samples.folder import SampleFolder
from streams.core.validate import check
from streams.deadletter import reason_label

# Event time between two planner ticks (the live worker ticks every second of wall time).
DEFAULT_TICK_MS = 60_000
BUNDLE = 2_000  # cluster-stage messages sent as one bundle per cluster (the worker bundles per fetched batch)
PARTITION = 0  # the replay is one ordered source, as one samples partition and one errors partition


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """What a policy did to a history: its findings and actions, and what it could not use."""

    findings: list[Finding]
    actions: list[Action]
    start_ts: int | None
    end_ts: int | None  # the newest event time replayed (the watermark at the end)
    replayed: dict[str, int] = field(default_factory=dict)  # event type -> records folded
    rejected: dict[str, int] = field(default_factory=dict)  # reason -> records the validator refuses
    late: dict[str, int] = field(default_factory=dict)  # stage -> records too late to count
    fleet: FleetState = field(default_factory=FleetState)


class Replay:
    """One policy's detectors and planner over an ordered history (state in dicts, as in the stage tests)."""

    def __init__(
        self,
        policy: Policy,
        inventory: Iterable[Record],
        *,
        tick_ms: int = DEFAULT_TICK_MS,
        plan_order: PlanOrder = "event_time",
    ) -> None:
        self.policy = policy
        self.tick_ms = tick_ms
        self.inventory = Inventory()
        for record in inventory:
            self.inventory.apply(record)
        self.fleet = FleetState()
        self.planner = Planner(policy, members=self.inventory.hosts_in)
        self.ordered = (
            OrderedPlan(
                self.planner,
                all_sources(1, 1),
                {},
                size=self.inventory.domain_size,
                domain_of=self.inventory.domain_of,
            )
            if plan_order == "event_time"
            else None
        )
        self.times = SourceTimes()
        self.ticks = TickSchedule(self.planner, self.inventory.domain_size, skip_unchanged=True)
        self.sampled = False  # a cluster source with no sample yet holds nothing back
        self.repeat: dict[str, HostState] = {}
        self.folder = SampleFolder(policy, 1, lambda: {h.cluster for h in self.inventory.hosts.values()})
        self.partition = PartitionState(PARTITION)
        self.cluster_stage = ClusterStage(policy.slow_host)
        self.cluster_store: dict[str, Any] = {}
        self.findings: list[Finding] = []
        self.actions: list[Action] = []
        self.replayed: Counter[str] = Counter()
        self.rejected: Counter[str] = Counter()
        self.late: Counter[str] = Counter()
        self.offset = 0
        self.watermark: int | None = None
        self.next_tick: int | None = None
        self.pending: list[ClusterItem] = []  # cluster-stage messages not sent yet

    # -- the stream -------------------------------------------------------------------------------

    def run(self, history: History) -> ReplayResult:
        """Fold the whole history, then let the partition go idle and tick once more, as a worker would."""
        self.ticks.wake_at(change_times(history.outages))
        outages = iter(history.outages)
        pending = next(outages, None)
        first: int | None = None
        for record in history.events:
            if first is None:
                first = record["ts"]
            while pending is not None and pending["ts"] <= record["ts"]:
                apply_logged(self.fleet, pending)
                pending = next(outages, None)
            self.step(record)
        while pending is not None:  # recorded before the end of the period, after the last event
            apply_logged(self.fleet, pending)
            pending = next(outages, None)
        return self.finish(first)

    def step(self, record: Record) -> None:
        """One error or sample, read at the next offset of the one source partition."""
        ts = record["ts"]
        if self.next_tick is not None and ts >= self.next_tick:
            self._flush()
            self.tick()
        self.watermark = ts if self.watermark is None else max(self.watermark, ts)
        if self.next_tick is None or ts >= self.next_tick:
            self.next_tick = (ts // self.tick_ms + 1) * self.tick_ms
        self.offset += 1
        try:
            check(record, self.policy.validation, ts)  # no wall clock: a replayed record is never ahead of it
        except InvalidRecordError as exc:
            self.rejected[reason_label(exc)] += 1
            return
        self.replayed[record["event_type"]] += 1
        if record["event_type"] == HostSampled.EVENT_TYPE:
            self._sample(record)
        else:
            self._error(record)
            self.times.errors_read(PARTITION, ts)

    def _error(self, record: Record) -> None:
        self._flush()  # samples before this error reach the planner before it does
        signal = classify(record, self.policy)
        if signal is None:
            return
        step = fold_host(self.repeat.get(signal.host_id), signal, (PARTITION, self.offset), self.policy)
        if step.late:
            self.late["errors"] += 1
        if step.state is not None:
            self.repeat[signal.host_id] = step.state
        if step.finding is not None:
            self._plan(step.finding)

    def _sample(self, record: Record) -> None:
        self.sampled = True
        messages, late = self.folder.fold(self.partition, record)
        if late:
            self.late["samples"] += 1
        self.pending += messages
        if len(self.pending) >= BUNDLE:
            self._flush()

    def _flush(self) -> None:
        """The pending messages to the cluster stage, one bundle per cluster in source order (as the worker's batches)."""
        messages, self.pending = self.pending, []
        bundles: dict[str, list[ClusterItem]] = {}
        for message in messages:
            bundles.setdefault(message.cluster, []).append(message)
        for cluster, items in bundles.items():
            findings, _, late = self.cluster_stage.add_bundle(
                self.cluster_store, cluster, items, str(self.offset), replayable=False
            )
            if late:
                self.late["cluster"] += late
            for finding in findings:
                self._plan(finding)
            floor = cluster_floor(self.cluster_store, cluster, self.policy.slow_host)
            self.times.cluster_read(PARTITION, cluster, floor)

    # -- the planner ------------------------------------------------------------------------------

    def _plan(self, finding: Finding) -> None:
        self.findings.append(finding)
        why = unplannable(finding.to_record())
        if why is not None:
            self.rejected[why.split(":", 1)[0]] += 1
            return
        domain = self.inventory.domain_of(finding.host_id)
        if self.ordered is not None:
            self.actions += self.ordered.finding(self.fleet, finding, domain)
            return
        size = self.inventory.domain_size(domain)
        self.actions += self.planner.on_finding(self.fleet, finding, domain, size)

    def tick(self) -> None:
        """Move every domain with work due at the watermark, as ``PlannerShell.ticks`` and the planner agent do."""
        if self.ordered is not None:
            self._progress(idle=False)
            return
        wm = self.watermark
        if wm is not None:
            self.ticks.tick(self.fleet, wm, lambda domain: self._reconcile(domain, wm))

    def _reconcile(self, domain: str, now: int) -> None:
        self.actions += self.planner.reconcile(self.fleet, domain, self.inventory.domain_size(domain), now)

    def _progress(self, *, idle: bool) -> None:
        """Both sources' progress to the ordered planner, as a worker's timer sends it."""
        assert self.ordered is not None
        marks = self.times.marks([(PARTITION, idle)], [(PARTITION, idle or not self.sampled)])
        self.actions += self.ordered.progress(self.fleet, marks)
        self.ordered.settle()  # the replay's actions are kept as soon as they are decided

    def finish(self, start_ts: int | None) -> ReplayResult:
        """The source goes idle (every window its data passed closes), then a last tick."""
        self.pending += self.folder.progress(self.partition, "idle")
        self._flush()
        if self.ordered is not None:
            self._progress(idle=True)  # the end of the history: every held finding is decided
        else:
            self.tick()
        return ReplayResult(
            findings=list(self.findings),
            actions=list(self.actions),
            start_ts=start_ts,
            end_ts=self.watermark,
            replayed=dict(sorted(self.replayed.items())),
            rejected=dict(sorted(self.rejected.items())),
            late=dict(sorted(self.late.items())),
            fleet=self.fleet,
        )


def replay(
    history: History, policy: Policy, *, tick_ms: int = DEFAULT_TICK_MS, plan_order: PlanOrder = "event_time"
) -> ReplayResult:
    """Run ``policy`` over ``history``: pure, the same inputs give the same findings and actions in the same order."""
    return Replay(policy, history.inventory, tick_ms=tick_ms, plan_order=plan_order).run(history)
