"""Rollout safety: is the new version worse than the old one? A sequential test over the campaign's faults.

Each finding on a host in scope is a Bernoulli trial: did it land on an upgraded host? With ``u`` of
the scope's ``n`` hosts upgraded at that moment, equal rates put it there with probability
``q0 = u / n``; a new version ``r`` times worse, with ``q1 = r u / (r u + n - u)``. Wald's SPRT sums
the log likelihood ratio per fault class: above ``log((1 - beta) / alpha_c)`` the change is worse
with confidence (the train halts); at ``log(beta / (1 - alpha))`` it is accepted as no worse than
``r`` (each hardware class accepted opens the gate) and the sum is held there, watching on. Conditioning on the faults that happen
cancels the fleet's base rate and its drift (a hot week raises both groups), so nothing has to be
estimated first, and the test starts with the first fault. Why this test: docs/DESIGN.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from ground.halt_evidence import class_evidence

DAY_MS = 86_400_000
ERRORS_RULE = "errors/"  # the rule of an error counted for the test (streams.trains.error_days): + its class
State = Literal["watching", "accepted", "halt"]


class FaultLike(Protocol):
    @property
    def rule(self) -> str: ...
    @property
    def upgraded(self) -> bool: ...
    @property
    def n_upgraded(self) -> int: ...


@dataclass(frozen=True, slots=True)
class SprtSettings:
    rate_ratio: float = 2.0  # H1: the new version's fault rate is this many times the old one's
    alpha: float = 0.01  # chance a good change is halted, shared between the fault classes
    beta: float = 0.05  # chance a change ``rate_ratio`` times worse passes the gate
    classes: int = 4  # how many fault classes share ``alpha`` (Bonferroni)

    @property
    def upper(self) -> float:
        return math.log((1 - self.beta) / (self.alpha / self.classes))

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1 - self.alpha))


@dataclass(frozen=True, slots=True)
class ClassVerdict:
    """One fault class's test, with the evidence a page carries."""

    fault_class: str
    llr: float
    upper: float
    state: State
    faults_upgraded: int
    faults_control: int
    days_upgraded: float  # host-days on the new version
    days_control: float  # host-days on the old one

    @property
    def rate_ratio(self) -> tuple[float, float, float]:
        """(estimate, low, high) of the new/old rate ratio per host-day, 95 % (log-normal, +0.5 when a count is 0)."""
        a, b = self.faults_upgraded, self.faults_control
        if self.days_upgraded <= 0 or self.days_control <= 0:
            return (math.nan, math.nan, math.nan)
        a2, b2 = (a + 0.5, b + 0.5) if 0 in (a, b) else (a, b)
        est = (a2 / self.days_upgraded) / (b2 / self.days_control)
        half = 1.96 * math.sqrt(1 / a2 + 1 / b2)
        return (est, est * math.exp(-half), est * math.exp(half))

    def evidence(self) -> str:
        return class_evidence(
            self.fault_class,
            (self.faults_upgraded, self.days_upgraded),
            (self.faults_control, self.days_control),
            self.rate_ratio,
            self.llr,
            self.upper,
        )


def step(llr: float, upgraded: bool, n_upgraded: int, scope: int, settings: SprtSettings) -> float:
    """The log likelihood ratio after one more fault (unchanged when no comparison is possible)."""
    control = scope - n_upgraded
    if n_upgraded <= 0 or control <= 0:
        return llr
    r = settings.rate_ratio
    q0 = n_upgraded / scope
    q1 = r * n_upgraded / (r * n_upgraded + control)
    llr += math.log(q1 / q0) if upgraded else math.log((1 - q1) / (1 - q0))
    return max(llr, settings.lower)


class SequentialTest:
    """The test over a growing list of faults, fed incrementally (each fault is looked at once)."""

    def __init__(self, scope: int, classify: Callable[[str], str], settings: SprtSettings) -> None:
        self.scope, self.classify, self.settings = scope, classify, settings
        self.seen = 0
        self.llr: dict[str, float] = {}
        self.accepted: dict[str, bool] = {}
        self.counts: dict[str, list[int]] = {}

    def feed(self, faults: Sequence[FaultLike]) -> None:
        """Take the faults past those already seen (``faults`` only grows)."""
        for f in faults[self.seen :]:
            for name in (self.classify(f.rule), "all"):
                now = step(self.llr.get(name, 0.0), f.upgraded, f.n_upgraded, self.scope, self.settings)
                self.llr[name] = now
                self.accepted[name] = self.accepted.get(name, False) or now <= self.settings.lower
                self.counts.setdefault(name, [0, 0])[0 if f.upgraded else 1] += 1
        self.seen = len(faults)

    def verdicts(self, days: tuple[float, float]) -> dict[str, ClassVerdict]:
        """Every fault class's verdict, and ``"all"`` pooled; ``days``: host-days (new version, old)."""
        upper = self.settings.upper
        return {
            name: ClassVerdict(
                fault_class=name,
                llr=value,
                upper=upper,
                state="halt" if value >= upper else ("accepted" if self.accepted[name] else "watching"),
                faults_upgraded=self.counts[name][0],
                faults_control=self.counts[name][1],
                days_upgraded=days[0],
                days_control=days[1],
            )
            for name, value in self.llr.items()
        }


def sequential_test(
    faults: Sequence[FaultLike],
    scope: int,
    classify: Callable[[str], str],
    settings: SprtSettings,
    days: tuple[float, float],
) -> dict[str, ClassVerdict]:
    """The verdicts over ``faults`` at once (``SequentialTest`` fed in one go)."""
    test = SequentialTest(scope, classify, settings)
    test.feed(faults)
    return test.verdicts(days)


def classifier(
    classes: Mapping[str, list[str]], rule_classes: Mapping[str, list[str]]
) -> Callable[[str], str]:
    """A fault's class from its rule: the class holding the rule's first error class (``slow_host``: slow;
    an error counted per host-day: the class it names)."""
    of_error = {e: c for c, errors in classes.items() for e in errors}

    def classify(rule: str) -> str:
        if rule.startswith(ERRORS_RULE):  # an error counted per host-day names its class
            return rule.removeprefix(ERRORS_RULE)
        if rule.startswith("slow"):
            return "slow"
        return next((of_error[e] for e in rule_classes.get(rule, []) if e in of_error), "other")

    return classify
