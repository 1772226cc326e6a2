"""The jobs as the fleet's history moves them: one driver of the ``JobBook`` for the twin and its replay.

The in-process twin calls it as it runs; a live closed loop records what happened to its hosts and
replays it here afterwards (``goodput.replay``). Every call is one ``Step`` of the history (event time
in ms), so what the twin did can be replayed too, and both reach the same ledger through the same rules.
"""

from __future__ import annotations

from dataclasses import dataclass

from fleetpulse.twin.jobs import JobBook
from producers.fleet import Fleet

HOUR_MS = 3_600_000
INTERRUPT, LEAVE, BACK, SLOW, CURED = "interrupt", "leave", "back", "slow", "cured"


@dataclass(frozen=True, slots=True, order=True)
class Step:
    """One thing that happened to a host; ``order`` breaks ties between steps of one instant."""

    ts: int
    order: int
    kind: str  # INTERRUPT (cause: failures | deferrals), LEAVE, BACK, SLOW (onset), CURED (slow host)
    host: int
    cause: str = ""


class Pacer:
    """The jobs and the slow hosts' pace; ``steps`` is the history it was driven by, in call order."""

    def __init__(self, fleet: Fleet, book: JobBook, slowdown: list[float], start_ts: int) -> None:
        self.fleet, self.book, self.start_ts = fleet, book, start_ts
        self.slow = list(slowdown)  # a host's mean slowdown once it is on (0: not slow, or cured)
        self.slow_on = [False] * fleet.n_hosts
        self.steps: list[Step] = []

    def _h(self, ts: int) -> float:
        return (ts - self.start_ts) / HOUR_MS

    def _log(self, ts: int, kind: str, host: int, cause: str = "") -> None:
        self.steps.append(Step(ts, len(self.steps), kind, host, cause))

    def interrupt(self, h: int, ts: int, cause: str) -> bool:
        """A fault on ``h`` stops its job (True), charged to ``cause`` in the host's domain."""
        self._log(ts, INTERRUPT, h, cause)
        return self.book.interrupt(h, self._h(ts), cause, self.fleet.domain[h])

    def leave(self, h: int, ts: int) -> None:
        self._log(ts, LEAVE, h)
        t = self._h(ts)
        job = self.book.leave(h, t, self.fleet.host_cluster(h), self.fleet.domain[h])
        if job is not None:
            self._repace_job(job, t)

    def back(self, h: int, ts: int) -> None:
        self._log(ts, BACK, h)
        t = self._h(ts)
        job = self.book.back(h, t, self.fleet.host_cluster(h))
        if job is not None:
            self._repace_job(job, t)

    def slow_onset(self, h: int, ts: int) -> None:
        self._log(ts, SLOW, h)
        self.slow_on[h] = True
        job = self.book.job_of.get(h)
        if job is not None:
            self._repace_job(job, self._h(ts))

    def cured(self, h: int, ts: int) -> None:
        """A repair cured the slow host: its job's pace changes when the host comes back."""
        self._log(ts, CURED, h)
        self.slow[h] = 0.0

    def finish(self, end_ts: int) -> None:
        self.book.finish(self._h(end_ts))

    def apply(self, step: Step) -> None:
        if step.kind == INTERRUPT:
            self.interrupt(step.host, step.ts, step.cause)
        elif step.kind == LEAVE:
            self.leave(step.host, step.ts)
        elif step.kind == BACK:
            self.back(step.host, step.ts)
        elif step.kind == SLOW:
            self.slow_onset(step.host, step.ts)
        elif step.kind == CURED:
            self.cured(step.host, step.ts)
        else:
            raise ValueError(f"unknown step kind {step.kind!r}")

    def _repace_job(self, j: int, t_h: float) -> None:
        self.book.pace_slowest(
            j, t_h, lambda h: self.slow[h] if self.slow_on[h] else 0.0, self.fleet.domain.__getitem__
        )
