"""Deltas of monotonic hardware counters, with resets (driver reload, port reset) and wrap-around.

A counter that goes backwards either wrapped (it was near its width's top) or was reset; a reset
counts the new value as the delta (what accrued since the reset), never a negative number.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

Outcome = Literal["first", "ok", "wrapped", "reset"]


class Delta(NamedTuple):
    value: int
    outcome: Outcome


def counter_delta(previous: int | None, current: int, bits: int = 64) -> Delta:
    """The increase from ``previous`` to ``current`` for a ``bits``-wide counter."""
    if previous is None:
        return Delta(0, "first")
    if current >= previous:
        return Delta(current - previous, "ok")
    top = (1 << bits) - 1
    # a wrap leaves the old value within the top 1/16 of the range; anything else is a reset, and so
    # is a fall from a value the width cannot hold (the counter is wider than documented): never negative
    if bits < 64 and top - (top >> 4) < previous <= top and current <= top:
        return Delta(top - previous + current + 1, "wrapped")
    return Delta(max(current, 0), "reset")


class CounterSet:
    """Baselines of named counters (JSON-able for the agent's state); one ``delta`` call per read."""

    def __init__(self) -> None:
        self.last: dict[str, int] = {}

    def delta(self, name: str, current: int, bits: int = 64) -> Delta:
        d = counter_delta(self.last.get(name), current, bits)
        self.last[name] = current
        return d

    def state(self) -> dict[str, int]:
        return dict(self.last)

    def restore(self, state: dict[str, int]) -> None:
        self.last = {str(k): int(v) for k, v in state.items()}
