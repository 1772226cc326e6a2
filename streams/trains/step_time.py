"""Rollout safety on step time: are the hosts on the new version slower than those not yet on it? (pure)

Each window (an hour of a cluster, say) gives every host's step time relative to its own baseline from
before the campaign, in logs, so a host's lasting offset and the job's pace cancel; the window's
observation is the upgraded hosts' mean minus the others', with its standard error from their spread.
Wald's SPRT for a normal mean, H0: no slower, H1: slower by ``slowdown`` (log ``1 + slowdown``), adds
``(mu1 d - mu1^2 / 2) / se^2`` per window. At ``log((1 - beta) / alpha)`` the new version is slower
with confidence (the train halts); Wald's bound puts the chance that a change no slower gets there at
``alpha`` or less (each window independent: new noise, the baselines fixed), measured in
bench/bench_trains.py. At ``log(beta / (1 - alpha))`` it is accepted as no slower and held there.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ground.halt_evidence import step_evidence

State = Literal["watching", "accepted", "halt"]


@dataclass(frozen=True, slots=True)
class StepSettings:
    slowdown: float = 0.03  # H1: the new version's steps take this much longer (3 %)
    alpha: float = 0.01  # chance a change no slower is halted (Wald's bound)
    beta: float = 0.05  # chance a change ``slowdown`` slower is accepted

    @property
    def upper(self) -> float:
        return math.log((1 - self.beta) / self.alpha)

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1 - self.alpha))


@dataclass(frozen=True, slots=True)
class StepWindow:
    """One window's comparison, in the sufficient statistics the fold keeps."""

    ts: int
    upgraded: int  # hosts on the new version with a step time in the window
    control: int  # hosts not on it yet
    diff: float  # mean log relative step time, upgraded minus control
    se: float  # its standard error


def window(ts: int, upgraded: Sequence[float], control: Sequence[float]) -> StepWindow | None:
    """The window's comparison from each host's step time relative to its baseline (1.02: 2 % slower);
    None when either side has fewer than two hosts."""
    up = [math.log(x) for x in upgraded if x > 0]
    ctl = [math.log(x) for x in control if x > 0]
    if len(up) < 2 or len(ctl) < 2:
        return None
    mu, mc = sum(up) / len(up), sum(ctl) / len(ctl)
    ss = sum((x - mu) ** 2 for x in up) + sum((x - mc) ** 2 for x in ctl)
    sd = math.sqrt(ss / (len(up) + len(ctl) - 2))
    se = sd * math.sqrt(1 / len(up) + 1 / len(ctl))
    return StepWindow(ts, len(up), len(ctl), mu - mc, max(se, 1e-6))


@dataclass(frozen=True, slots=True)
class StepVerdict:
    llr: float
    upper: float
    state: State
    windows: int
    diff: float  # the windows' precision-weighted mean difference (log)
    se: float

    def evidence(self) -> str:
        est, lo, hi = (
            100 * (math.exp(x) - 1)
            for x in (self.diff, self.diff - 1.96 * self.se, self.diff + 1.96 * self.se)
        )
        return step_evidence((est, lo, hi), self.windows, self.llr, self.upper)


class StepTest:
    """The SPRT over a growing list of windows, fed incrementally (each window is looked at once)."""

    def __init__(self, settings: StepSettings) -> None:
        self.settings = settings
        self.seen = 0
        self.llr = 0.0
        self.accepted = False
        self._w = self._wd = 0.0  # sums of 1/se^2 and d/se^2

    def feed(self, windows: Sequence[StepWindow]) -> None:
        mu1 = math.log(1 + self.settings.slowdown)
        for w in windows[self.seen :]:
            precision = 1 / (w.se * w.se)
            self.llr = max(self.llr + (mu1 * w.diff - mu1 * mu1 / 2) * precision, self.settings.lower)
            self.accepted = self.accepted or self.llr <= self.settings.lower
            self._w += precision
            self._wd += w.diff * precision
        self.seen = len(windows)

    def verdict(self) -> StepVerdict | None:
        if not self.seen:
            return None
        upper = self.settings.upper
        state: State = "halt" if self.llr >= upper else ("accepted" if self.accepted else "watching")
        return StepVerdict(self.llr, upper, state, self.seen, self._wd / self._w, 1 / math.sqrt(self._w))
