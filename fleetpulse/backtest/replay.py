"""The detectors and the planner run offline: a lake's history folded through the detection core.

``streams.core.detection.DetectionCore`` is the one wiring of validation, the repeat rules, the
sample folding, the peer comparison and the planner over the lifecycle fold (the live worker runs
the same steps in its agents). This runner feeds it a lake's history in event-time order, with the
incidents and operators' steps it recorded folded in at their times, and reads what it decided. A lake's
valid samples reach the core as column batches (``DayByDay.items``), each run cut where an outage falls.
"""

from __future__ import annotations

import gc
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from fleetpulse.backtest.events import DayByDay, History, Record
from fleetpulse.backtest.sample_runs import SampleRun
from ground.settings.detect import PlanOrder
from streams.core.actions import Action
from streams.core.detection import DEFAULT_TICK_MS, DetectionCore
from streams.core.findings import Finding
from streams.core.fleet.lifecycle import FleetState
from streams.core.fleet.outages import change_times
from streams.core.inventory import Inventory
from streams.core.policy import Policy

__all__ = ["DEFAULT_TICK_MS", "Replay", "ReplayResult", "few_collections", "replay"]

# Allocations between two collections of the youngest generation (CPython's default is 700).
YOUNG_THRESHOLD = 100_000


@contextmanager
def few_collections(threshold: int = YOUNG_THRESHOLD) -> Iterator[None]:
    """The cyclic garbage collector's youngest generation collected every ``threshold`` allocations.

    A replay allocates a score of containers per record (decoded payloads, windows, messages), almost
    none in cycles; at the default threshold each collection walks them again, about a third of the
    replay's CPU (meta-48k). When garbage is collected changes nothing a replay decides.
    """
    old = gc.get_threshold()
    gc.set_threshold(threshold, *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)


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


class Replay(DetectionCore):
    """The detection core over an inventory's records (state in dicts); ``run`` folds a whole history."""

    def __init__(
        self,
        policy: Policy,
        inventory: Iterable[Record],
        *,
        tick_ms: int = DEFAULT_TICK_MS,
        plan_order: PlanOrder = "event_time",
    ) -> None:
        hosts = Inventory()
        for record in inventory:
            hosts.apply(record)
        super().__init__(policy, hosts, tick_ms=tick_ms, plan_order=plan_order)

    def run(self, history: History) -> ReplayResult:
        """Fold the whole history, then let the partition go idle and tick once more, as a worker would."""
        with few_collections():
            return self._run(history)

    def _run(self, history: History) -> ReplayResult:
        self.wake_at(change_times(history.outages))
        outages = iter(history.outages)
        pending = next(outages, None)
        first: int | None = None
        events = history.events
        items = events.items(self.policy.validation) if isinstance(events, DayByDay) else events
        for item in items:
            if isinstance(item, SampleRun):
                ts, lo = item.cols.ts, item.lo
                if first is None:
                    first = ts[lo]
                while pending is not None and pending["ts"] <= ts[item.hi - 1]:
                    cut = bisect_left(ts, pending["ts"], lo, item.hi)  # rows before the outage's time
                    self.samples(item.cols, lo, cut)
                    self.logged(pending)
                    pending = next(outages, None)
                    lo = cut
                self.samples(item.cols, lo, item.hi)
                continue
            if first is None:
                first = item["ts"]
            while pending is not None and pending["ts"] <= item["ts"]:
                self.logged(pending)
                pending = next(outages, None)
            self.step(item)
        while pending is not None:  # recorded before the end of the period, after the last event
            self.logged(pending)
            pending = next(outages, None)
        return self.finish(first)

    def finish(self, start_ts: int | None) -> ReplayResult:
        """The source goes idle, a last tick, and what the core decided."""
        self.close()
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
