"""A sweep's shared stages: validation, the sample fold and the peer comparison run once for every policy
that agrees on what they read, and their outputs replayed into each policy's own repeat fold and planner.

``DetectionCore`` hands its downstream work to a few entry points (``_repeat``, ``_plan``, ``tick``,
``_last_tick``, ``logged``, ``wake_at``) and keeps its source times in a ``SourceTimes``. ``Recorder`` is a
replay whose entry points and source-time calls are noted on a ``Tape``, in order, instead of run, with the
front's clock (offset, watermark, whether a sample was seen) at each. It reads the policy through
``PolicyReads``, so the tape knows every policy section its stages read; ``Tape.fits`` says whether another
policy holds the same values there (nothing else can change what the tape holds), and ``Tape.play`` runs that
policy's downstream over it, which decides what ``replay`` decides for that policy.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, cast

from fleetpulse.backtest.errors import BacktestError
from fleetpulse.backtest.events import History, Record
from fleetpulse.backtest.replay import DEFAULT_TICK_MS, Replay, ReplayResult, few_collections, replay
from ground.settings.detect import PlanOrder
from streams.core.classify import Signal
from streams.core.detection import DetectionCore
from streams.core.findings import Finding
from streams.core.inventory import Inventory
from streams.core.planning.sources import SourceTimes
from streams.core.policy import Policy

__all__ = ["PolicyReads", "Recorder", "Tape", "record", "replays"]


class Clock(NamedTuple):
    """The front's position when it hands something downstream."""

    offset: int
    watermark: int | None
    sampled: bool


Op = tuple[Callable[..., None], tuple[Any, ...], Clock]  # (entry point, its arguments, the front's clock)


class PolicyReads:
    """A policy that notes the name of every top-level field (section) or method read from it."""

    def __init__(self, policy: Policy) -> None:
        self._policy = policy
        self.names: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        self.names.add(name)
        return getattr(self._policy, name)

    def values(self) -> dict[str, Any]:
        """What was read, by name (a method read compares equal only on the same policy object)."""
        return {name: getattr(self._policy, name) for name in sorted(self.names)}


class TimesCalls:
    """The recorder's source times: each method call is noted, then made on the real ``SourceTimes``."""

    def __init__(self, times: SourceTimes, note: Callable[..., None]) -> None:
        self._times, self._note = times, note

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._times, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            self._note(_times_call, name, args, kwargs)
            return attr(*args, **kwargs)

        return call


def _times_call(core: DetectionCore, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    getattr(core.times, name)(*args, **kwargs)


class Recorder(Replay):
    """The replay's shared stages only: what reaches the repeat fold, the planner and the source times is noted."""

    def __init__(
        self, policy: Policy, inventory: Iterable[Record], *, tick_ms: int, plan_order: PlanOrder
    ) -> None:
        super().__init__(policy, inventory, tick_ms=tick_ms, plan_order=plan_order)
        self.reads = PolicyReads(policy)
        self.policy = cast(Policy, self.reads)
        self._front(self.policy)  # the shared stages again, reading through ``reads``
        self.ops: list[Op] = []
        self.clock = Clock(0, None, False)
        self.source_times = self.times
        self.times = cast(SourceTimes, TimesCalls(self.times, self._note))

    def _note(self, entry: Callable[..., None], *args: Any) -> None:
        clock = self.clock
        if clock.offset != self.offset or clock.watermark != self.watermark or clock.sampled != self.sampled:
            clock = self.clock = Clock(self.offset, self.watermark, self.sampled)
        self.ops.append((entry, args, clock))

    def wake_at(self, times: Iterable[int]) -> None:
        self._note(DetectionCore.wake_at, list(times))

    def logged(self, record: dict[str, Any]) -> None:
        self._note(DetectionCore.logged, record)

    def _repeat(self, signal: Signal | None) -> None:
        self._note(DetectionCore._repeat, signal)

    def _plan(self, finding: Finding) -> None:
        self._note(DetectionCore._plan, finding)

    def tick(self) -> None:
        self._note(DetectionCore.tick)

    def _last_tick(self) -> None:
        self._note(DetectionCore._last_tick)


@dataclass(frozen=True, slots=True)
class Tape:
    """The shared stages' output over one history for the policy sections in ``reads``."""

    reads: Mapping[str, Any]  # policy section (or method) -> the value the stages read
    ops: Sequence[Op]
    front: ReplayResult  # what the shared stages counted (replayed, rejected, late) and the history's times
    times: SourceTimes  # the source times at the end
    inventory: Sequence[Record]
    tick_ms: int
    plan_order: PlanOrder

    def fits(self, policy: Policy) -> bool:
        """``policy`` reads what the recorded one read wherever the shared stages looked."""
        return all(getattr(policy, name) == value for name, value in self.reads.items())

    def play(self, policy: Policy) -> ReplayResult:
        """``replay(history, policy)`` for a policy that ``fits``: its repeat fold and planner over the tape."""
        hosts = Inventory()
        for item in self.inventory:
            hosts.apply(item)
        core = DetectionCore(policy, hosts, tick_ms=self.tick_ms, plan_order=self.plan_order)
        with few_collections():
            for entry, args, (core.offset, core.watermark, core.sampled) in self.ops:
                entry(core, *args)
        if core.times != self.times:
            raise BacktestError("a shared replay's source times differ from its recording")
        return ReplayResult(
            findings=list(core.findings),
            actions=list(core.actions),
            start_ts=self.front.start_ts,
            end_ts=self.front.end_ts,
            replayed=self.front.replayed,
            rejected=_merged(self.front.rejected, core.rejected),
            late=_merged(self.front.late, core.late),
            fleet=core.fleet,
        )


def _merged(front: Mapping[str, int], own: Counter[str]) -> dict[str, int]:
    return dict(sorted((Counter(front) + own).items()))


def record(
    history: History, policy: Policy, *, tick_ms: int = DEFAULT_TICK_MS, plan_order: PlanOrder = "event_time"
) -> Tape:
    """The shared stages of ``replay(history, policy)``, recorded."""
    recorder = Recorder(policy, history.inventory, tick_ms=tick_ms, plan_order=plan_order)
    front = recorder.run(history)
    return Tape(
        reads=recorder.reads.values(),
        ops=recorder.ops,
        front=front,
        times=recorder.source_times,
        inventory=history.inventory,
        tick_ms=tick_ms,
        plan_order=plan_order,
    )


def replays(
    history: History,
    policies: Sequence[Policy],
    *,
    tick_ms: int = DEFAULT_TICK_MS,
    plan_order: PlanOrder = "event_time",
    on_tape: Callable[[Tape], None] | None = None,
) -> list[ReplayResult]:
    """``replay(history, p)`` for each policy, in order: the shared stages run once per group of policies
    that agree on what they read (the first policy not yet replayed records a tape for the ones that fit it;
    one left alone is replayed whole). ``on_tape`` sees each tape recorded."""
    out: list[ReplayResult | None] = [None] * len(policies)
    for i, policy in enumerate(policies):
        if out[i] is not None:
            continue
        if sum(r is None for r in out) == 1:
            out[i] = replay(history, policy, tick_ms=tick_ms, plan_order=plan_order)
            continue
        tape = record(history, policy, tick_ms=tick_ms, plan_order=plan_order)
        if on_tape is not None:
            on_tape(tape)
        for j in range(i, len(policies)):
            if out[j] is None and tape.fits(policies[j]):
                out[j] = tape.play(policies[j])
    return [r for r in out if r is not None]
