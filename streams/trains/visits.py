"""A campaign's host visits, and the tallies of them its fold keeps (``VisitTallies``).

A domain's reconcile asks how many visits are done, which are still open and how long the changed
hosts have run the version; walking every visit for it made each reconcile cost the size of the
campaign (a meta-48k cycle did not finish). The fold keeps the answers as it moves the visits.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

DAY_MS = 86_400_000


@dataclass(slots=True)
class Visit:
    """One host's turn in a campaign."""

    host_id: str
    domain: str
    previous: str | None = None  # the version the change replaces (what a rollback restores)
    queued_ts: int | None = None
    requested_ts: int | None = None
    applied_ts: int | None = None
    done_ts: int | None = None

    @property
    def phase(self) -> str:
        if self.done_ts is not None:
            return "done"
        if self.applied_ts is not None:
            return "burn_in"
        return "changing" if self.requested_ts is not None else "queued"

    @property
    def is_open(self) -> bool:
        """Queued, changing or in burn-in: not done, and some step taken."""
        started = self.queued_ts is not None or self.requested_ts is not None or self.applied_ts is not None
        return self.done_ts is None and started


@dataclass(slots=True)
class VisitTallies:
    """What the gate and the conductor need of every visit, kept as the fold moves them."""

    verified: int = 0  # visits done
    applied: int = 0  # visits with the change applied
    applied_sum: int = 0  # the sum of their applied times
    applied_max: int = 0  # the newest of them
    open: set[str] = field(default_factory=set)  # hosts whose visit ``is_open``

    @classmethod
    def of(cls, visits: Iterable[Visit]) -> VisitTallies:
        tallies = cls()
        for visit in visits:
            tallies.verified += visit.done_ts is not None
            if visit.applied_ts is not None:
                tallies.add_applied(visit.applied_ts)
            tallies.place(visit)
        return tallies

    def add_applied(self, ts: int) -> None:
        self.applied += 1
        self.applied_sum += ts
        self.applied_max = max(self.applied_max, ts)

    def place(self, visit: Visit) -> None:
        """Keep ``open`` in step with the visit after a step moved it."""
        if visit.is_open:
            self.open.add(visit.host_id)
        else:
            self.open.discard(visit.host_id)

    def applied_days(self, now: int, visits: Mapping[str, Visit]) -> float:
        """Host-days run on the new version by ``now`` (a change applied after ``now`` counts none)."""
        if self.applied_max <= now:
            return (self.applied * now - self.applied_sum) / DAY_MS
        return sum(max(0, now - v.applied_ts) for v in visits.values() if v.applied_ts is not None) / DAY_MS

    def open_visits(self, visits: Mapping[str, Visit]) -> Iterator[tuple[str, Visit]]:
        return ((h, visits[h]) for h in self.open)
