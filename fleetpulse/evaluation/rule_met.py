"""Whether a host's recorded faults meet a repeat-offender rule of the policy, scope by scope.

A healthy host whose faults do meet a rule was rightly flagged by the rule and wrongly by the
truth: the scorer reports it as "rule met, not a lemon", apart from true and false positives.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import polars as pl

Scope = Literal["gpu", "port", "host"]

# The detector's error classes as the simulator's fault kinds, where the names differ.
CLASS_KINDS: dict[str, tuple[str, ...]] = {
    "nic_lost": ("nic",),
}


@dataclass(frozen=True, slots=True)
class RepeatRule:
    """``count`` faults of ``kinds`` on one scope within ``window_ms`` make a lemon detectable."""

    kinds: tuple[str, ...]
    count: int
    window_ms: int


@dataclass(frozen=True, slots=True)
class ScopedRule:
    """``count`` faults of ``kinds`` on one ``scope`` (a GPU, a port, the host) within ``window_ms``."""

    kinds: tuple[str, ...]
    scope: Scope
    count: int
    window_ms: int
    component: Literal["any", "unknown"] = "any"  # "unknown": counts only events naming no GPU or port


def kinds_of(classes: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted({k for c in classes for k in CLASS_KINDS.get(c, (c,))}))


def threshold_reached_at(ts: Iterable[int], count: int, window_ms: int) -> int | None:
    """Earliest time at which ``count`` of the events ``ts`` lie within ``window_ms`` (inclusive), else None."""
    times = sorted(ts)
    for i in range(count - 1, len(times)):
        if times[i] - times[i - count + 1] <= window_ms:
            return times[i]
    return None


def rules_for(rules: Sequence[ScopedRule], host_only: bool) -> list[ScopedRule]:
    """The rules that can see a host's faults: a host whose events name only the host meets the
    host-scope rules (the "unknown component" ones among them) and no per-GPU or per-port rule; any
    other host every rule but the "unknown component" ones."""
    if host_only:
        return [r for r in rules if r.scope == "host"]
    return [r for r in rules if r.component == "any"]


def rule_met(faults: pl.DataFrame, rules: Sequence[ScopedRule], start: int, end: int) -> bool:
    """Whether one host's faults in [start, end] reach any of ``rules`` on one of its scopes."""
    for rule in rules:
        mine = faults.filter(pl.col("kind").is_in(list(rule.kinds)) & pl.col("ts").is_between(start, end))
        if mine.height < rule.count:
            continue
        key = {"gpu": "gpu", "port": "port"}.get(rule.scope)
        groups = mine.partition_by(key) if key else [mine]
        if any(
            threshold_reached_at(g["ts"].to_list(), rule.count, rule.window_ms) is not None for g in groups
        ):
            return True
    return False
