"""One job's training clock: work, checkpoint saves, restarts and the work an interruption throws away.

Pure functions over an immutable ``JobClock``. A job alternates ``interval_h`` of useful work with a
save of ``save_h``; an interruption drops the work since the last completed save (and a save in
progress) and costs ``restart_h`` before work resumes. A slow host runs the job at ``rate`` < 1: the
missing share of its working time is the slow hosts' loss. Every wall hour of a job lands in exactly
one bucket of its ``Ledger``, so the buckets sum to the job's wall time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

EPS = 1e-12


@dataclass(frozen=True, slots=True)
class JobSpec:
    """A job's size and its checkpoint/restart figures (hours)."""

    gpus: int
    length_h: float  # useful work to finish (math.inf: runs through the horizon)
    interval_h: float  # useful work between two checkpoint saves (Young-Daly's Δt)
    save_h: float  # wall time of one checkpoint save
    restart_h: float  # wall time from an interruption until work resumes


@dataclass(frozen=True, slots=True)
class Ledger:
    """A job's wall hours by where they went (multiply by ``gpus`` for GPU-hours)."""

    useful: float = 0.0  # work kept (checkpointed, or in flight at the end)
    slow: float = 0.0  # kept working time lost to a slow host (work done at rate < 1)
    failed: float = 0.0  # working time thrown away by interruptions (since the last checkpoint)
    restart: float = 0.0
    save: float = 0.0
    waiting: float = 0.0  # stopped for want of healthy hosts

    @property
    def wall(self) -> float:
        return self.useful + self.slow + self.failed + self.restart + self.save + self.waiting

    def plus(self, other: Ledger) -> Ledger:
        return Ledger(*(a + b for a, b in zip(self.astuple(), other.astuple(), strict=True)))

    def astuple(self) -> tuple[float, ...]:
        return (self.useful, self.slow, self.failed, self.restart, self.save, self.waiting)


@dataclass(frozen=True, slots=True)
class JobClock:
    """Where a job stands: saved work, work since the last save, and what is left to pay."""

    saved: float = 0.0  # useful work safely checkpointed
    since: float = 0.0  # useful work since the last checkpoint (lost if interrupted)
    since_wall: float = 0.0  # working wall time it took (>= since when slow)
    save_left: float = 0.0  # of a save in progress
    restart_left: float = 0.0
    finished: bool = False

    def progress(self) -> float:
        return self.saved + self.since


def _commit(clock: JobClock, ledger: Ledger) -> tuple[JobClock, Ledger]:
    """A save completed: the work since the last one is kept."""
    kept = replace(
        ledger, useful=ledger.useful + clock.since, slow=ledger.slow + clock.since_wall - clock.since
    )
    return replace(clock, saved=clock.saved + clock.since, since=0.0, since_wall=0.0, save_left=0.0), kept


def advance(spec: JobSpec, clock: JobClock, wall_h: float, rate: float = 1.0) -> tuple[JobClock, Ledger]:
    """Run the job for ``wall_h`` hours at ``rate`` (1: full speed); returns its clock and what the time went to.

    Time after the job finished is not spent (the ledger then covers less than ``wall_h``).
    """
    if rate <= 0:
        raise ValueError(f"rate must be > 0, got {rate}")
    ledger = Ledger()
    t = max(wall_h, 0.0)
    if clock.finished or t <= 0:
        return clock, ledger
    x = min(t, clock.restart_left)
    clock, ledger, t = replace(clock, restart_left=clock.restart_left - x), replace(ledger, restart=x), t - x
    if clock.save_left > 0 and t > 0:
        x = min(t, clock.save_left)
        clock, ledger, t = (
            replace(clock, save_left=clock.save_left - x),
            replace(ledger, save=ledger.save + x),
            t - x,
        )
        if clock.save_left <= EPS:
            clock, ledger = _commit(clock, ledger)
    if clock.save_left > EPS or clock.restart_left > EPS:
        return clock, ledger
    # Whole cycles (work a full interval, then save) in one step, when the clock sits on a checkpoint.
    cycle = spec.interval_h / rate + spec.save_h
    if clock.since <= EPS and cycle > 0:
        left_cycles = (
            math.floor((spec.length_h - clock.saved) / spec.interval_h + EPS)
            if spec.length_h < math.inf
            else math.inf
        )
        n = min(math.floor(t / cycle + EPS), left_cycles)
        n = max(int(n) - 1, 0) if n > 0 else 0  # the last cycle runs below, so a finish is seen
        if n:
            work = n * spec.interval_h
            ledger = replace(
                ledger,
                useful=ledger.useful + work,
                slow=ledger.slow + work / rate - work,
                save=ledger.save + n * spec.save_h,
            )
            clock, t = replace(clock, saved=clock.saved + work), t - n * cycle
    while t > EPS:
        need = min(spec.interval_h - clock.since, spec.length_h - clock.progress())
        wall_needed = need / rate
        if t < wall_needed:
            return replace(clock, since=clock.since + t * rate, since_wall=clock.since_wall + t), ledger
        t -= wall_needed
        clock = replace(clock, since=clock.since + need, since_wall=clock.since_wall + wall_needed)
        if clock.progress() >= spec.length_h - EPS:
            clock, ledger = _commit(clock, ledger)
            return replace(clock, finished=True), ledger
        x = min(t, spec.save_h)
        ledger, t = replace(ledger, save=ledger.save + x), t - x
        if x < spec.save_h - EPS:
            return replace(clock, save_left=spec.save_h - x), ledger
        clock, ledger = _commit(clock, ledger)
    return clock, ledger


def interrupt(spec: JobSpec, clock: JobClock) -> tuple[JobClock, Ledger]:
    """The job stops: its work since the last checkpoint is lost, and it owes a restart."""
    if clock.finished:
        return clock, Ledger()
    lost = Ledger(failed=clock.since_wall)
    return replace(clock, since=0.0, since_wall=0.0, save_left=0.0, restart_left=spec.restart_h), lost


def stop_gracefully(spec: JobSpec, clock: JobClock) -> tuple[JobClock, Ledger]:
    """The job is asked to stop (a drain): it checkpoints first, so it loses nothing but owes a restart.

    The save itself is taken as instant here: a drain waits for the job's next checkpoint.
    """
    if clock.finished:
        return clock, Ledger()
    clock, kept = _commit(clock, Ledger())
    return replace(clock, restart_left=spec.restart_h), kept


def close(clock: JobClock) -> Ledger:
    """At the end of the horizon the work in flight counts as kept (the job goes on and will save it)."""
    return Ledger(useful=clock.since, slow=clock.since_wall - clock.since)
