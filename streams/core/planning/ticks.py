"""Which maintenance domains a planner tick moves when findings are planned as they come.

Arrival order has no source marks to release work at: a timer ticks the domains instead. A domain
is moved only when its work signature changed since its last move, so a domain waiting on the
same due repair is not reconciled again on every tick. The live worker (``streams.planner_shell``)
and the backtest replay both ask this one schedule.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable
from typing import Any

from streams.core.fleet.lifecycle import FleetState
from streams.core.planning.planner import Planner


class TickSchedule:
    """The domains due a tick at a watermark, each one handed to ``move`` before the next is looked at.

    With ``skip_unchanged`` a tick asks no domain while the fleet state (``FleetState.count``) has
    not changed, the watermark has not reached the earliest repair due, nor passed a wake time
    since the last tick: the replay's speed-up. Wakes (``wake_at``) are the times the state changes without a
    record, imported outages' starts and ends (a host back from an incident frees its domain's buffer).
    It assumes sizes change only with the fleet state, as they do over the replay's fixed inventory.
    """

    def __init__(self, planner: Planner, size: Callable[[str], int], *, skip_unchanged: bool = False) -> None:
        self.planner = planner
        self.size = size
        self.skip_unchanged = skip_unchanged
        self.wakes: list[int] = []  # see ``wake_at``
        self._ticked: dict[str, tuple[Any, ...]] = {}
        self._count = -1  # FleetState.count at the end of the last tick
        self._due: int | None = None  # the earliest repair due, as of the last tick
        self._last: int | None = None  # the watermark of the last tick

    def tick(self, fleet: FleetState, watermark: int, move: Callable[[str], object]) -> None:
        """Call ``move(domain)`` for each domain (in name order) whose work changed since its last move.

        ``move`` may change ``fleet`` (the replay reconciles at once): the next domain's signature
        is taken after it.
        """
        last, self._last = self._last, watermark
        if (
            self.skip_unchanged
            and fleet.count == self._count
            and (self._due is None or watermark < self._due)
            and not self._woken(last, watermark)
        ):
            return
        campaigns = self.planner.trains.due_domains(fleet) if self.planner.trains is not None else set()
        for domain in sorted(fleet.domains.keys() | campaigns):
            signature = self.planner.work_signature(fleet, domain, self.size(domain), watermark)
            if signature is not None and self._ticked.get(domain) != signature:
                self._ticked[domain] = signature
                move(domain)
        if self.skip_unchanged:
            self._count = fleet.count
            dues = (self.planner.next_due(fleet, domain) for domain in fleet.domains)
            self._due = min((d for d in dues if d is not None), default=None)

    def wake_at(self, times: Iterable[int]) -> None:
        """Add wake times (see the class)."""
        self.wakes = sorted([*self.wakes, *times])

    def _woken(self, last: int | None, watermark: int) -> bool:
        """Whether a wake time lies in (last, watermark]."""
        i = bisect_right(self.wakes, last) if last is not None else 0
        return i < len(self.wakes) and self.wakes[i] <= watermark
