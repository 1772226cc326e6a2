"""Event-time order for the planner: a finding is decided once every source has passed its time.

Findings reach a planner partition from several sources (each errors partition, each
cluster-stage partition), each in its own order, and the planner's capacity decisions depend on
the order it sees them: which of two hosts takes a domain's last slot, whether a train halts.
Each source reports its progress (``PlanProgress``) on every planner partition after the
findings it sent there, so once every source that is not idle has passed T, no finding at or
before T is still on its way. ``OrderedPlan`` holds findings until then and decides them in
(event time, finding id) order, repairs due in between completing at their own times: the
same findings give the same actions whatever order they arrived in.

A finding at or before the horizon when it arrives is late (its source had declared itself idle,
or ran ahead of its own progress) and is decided at once. Held findings live in a store the
caller makes durable (a Faust table): the planner topic's offsets are committed while they wait.
A decided finding leaves that store only when the caller says its actions are in the log
(``settle``): a worker killed in between would otherwise restart with the finding neither held
nor acted on. Held again after such a crash, it is decided again, and the fleet state, folded
from the log, makes that a no-op if its actions had landed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from streams.core.actions import Action
from streams.core.findings import Finding
from streams.core.fleet.lifecycle import FleetState
from streams.core.planning.planner import Planner


def errors_source(partition: int) -> str:
    return f"errors/{partition}"


def cluster_source(partition: int) -> str:
    return f"cluster/{partition}"


def all_sources(errors_partitions: int, cluster_partitions: int) -> frozenset[str]:
    """Every source a planner waits for: it cannot tell a source that is quiet from one that is gone."""
    return frozenset(
        [errors_source(p) for p in range(errors_partitions)]
        + [cluster_source(p) for p in range(cluster_partitions)]
    )


@dataclass(frozen=True, slots=True)
class Mark:
    """A source's progress: no finding it sends later is at or before ``ts``; ``idle``: caught up."""

    ts: int | None
    idle: bool = False


@dataclass(slots=True)
class Horizon:
    """The event time up to which every source has spoken, for one planner partition."""

    sources: frozenset[str]
    marks: dict[str, Mark] = field(default_factory=dict)

    def note(self, source: str, mark: Mark) -> None:
        """A source's time only moves forward (a replay after a crash reports an older one)."""
        old = self.marks.get(source)
        times = [t for t in (old.ts if old else None, mark.ts) if t is not None]
        self.marks[source] = Mark(max(times) if times else None, mark.idle)

    def value(self) -> int | None:
        """Min over the sources not idle; None while a source is unheard of or has no time yet.

        When every source is idle, the newest time any of them reached (see ``all_idle``).
        """
        if any(s not in self.marks for s in self.sources):
            return None
        busy = [self.marks[s].ts for s in self.sources if not self.marks[s].idle]
        if any(ts is None for ts in busy):
            return None
        if busy:
            return min(ts for ts in busy if ts is not None)
        return max((m.ts for m in self.marks.values() if m.ts is not None), default=None)

    def all_idle(self) -> bool:
        """Every source caught up: whatever was sent is here, so nothing is worth holding."""
        return all(s in self.marks and self.marks[s].idle for s in self.sources)


def held_key(domain: str, finding: Finding) -> str:
    """Store key of a held finding: sorts by domain, then event time, then id."""
    return f"{domain}|{finding.ts:020d}|{finding.finding_id}"


class OrderedPlan:
    """One planner partition's findings in event-time order over a shared fleet state.

    ``held`` maps ``held_key`` to the FindingRaised record (a Faust table in the worker, which may
    hold other partitions' keys too); ``owns`` tells this partition's domains; ``size`` gives a
    domain's size from the inventory.
    """

    def __init__(
        self,
        planner: Planner,
        sources: frozenset[str],
        held: MutableMapping[str, Any],
        *,
        size: Callable[[str], int],
        owns: Callable[[str], bool] = lambda domain: True,
        domain_of: Callable[[str], str] | None = None,
    ) -> None:
        self.planner = planner
        self.domain_of = domain_of  # the inventory's domain of a host: outages move domains with no finding
        self.horizon = Horizon(sources)
        self.held = held
        self.size = size
        self.owns = owns
        self.late = 0
        self.released: int | None = None  # every held finding up to this time is decided
        self.decided: set[str] = set()  # held keys decided since the last settle()
        self._moved: dict[str, int] = {}  # per domain, the event time it was last moved to

    def finding(self, state: FleetState, finding: Finding, domain: str) -> list[Action]:
        """Hold a finding until the horizon passes it; decide it now if it already has (late)."""
        if finding.finding_id in state.findings:
            return []  # decided before (a replay upstream)
        h = _latest(self.horizon.value(), self.released)
        if h is not None and finding.ts <= h:
            self.late += 1
            return self.planner.on_finding(state, finding, domain, self.size(domain))
        self.held[held_key(domain, finding)] = finding.to_record()
        return []

    def progress(self, state: FleetState, marks: Iterable[tuple[str, Mark]]) -> list[Action]:
        """Note the sources' progress; decide whatever a horizon that moved released."""
        for source, mark in marks:
            self.horizon.note(source, mark)
        h = self._reach(state)
        if h is None or (self.released is not None and h <= self.released):
            return []
        before, self.released = self.released, h
        return self.release(state, h, since=before)

    def _reach(self, state: FleetState) -> int | None:
        """The horizon; with every source idle, the newest held finding or outage change if later.

        With nothing left to read, no finding is on its way: an operator's step or an incident's
        end folded from the log moves the planner to its time (it may free room for deferred work).
        """
        h = self.horizon.value()
        if not self.horizon.all_idle():
            return h
        held = [int(k.split("|", 2)[1]) for k in self._waiting() if self.owns(k.split("|", 1)[0])]
        changed = state.outages.newest_change or None
        return _latest(h, *held, changed)

    def _waiting(self) -> list[str]:
        return [k for k in self.held if k not in self.decided]

    def settle(self) -> None:
        """Drop the findings decided so far from the held store: their actions are in the log now."""
        for key in self.decided:
            self.held.pop(key, None)
        self.decided.clear()

    def release(self, state: FleetState, horizon: int, since: int | None = None) -> list[Action]:
        """Decide every held finding and every due repair up to ``horizon``, in event-time order;
        ``since``: the horizon released before (domains whose outages changed after it are moved too)."""
        by_domain: dict[str, list[tuple[str, Finding]]] = {}
        for key in sorted(self._waiting()):
            domain, ts, _ = key.split("|", 2)
            if int(ts) <= horizon and self.owns(domain):
                by_domain.setdefault(domain, []).append((key, Finding.from_record(self.held[key])))
        changed: set[str] = set()
        if self.domain_of is not None:  # a domain the planner never acted in may go past its failure buffer
            hosts = state.outages.hosts_changed(-1 if since is None else since, horizon)
            changed = {self.domain_of(h) for h in hosts}
        if (
            self.planner.trains is not None
        ):  # a campaign's next domains, though none of their hosts was acted on
            changed |= self.planner.trains.due_domains(state)
        domains = {d for d in state.domains.keys() | changed if self.owns(d)} | set(by_domain)
        out: list[Action] = []
        for domain in sorted(domains):
            out += self._release_domain(state, domain, by_domain.get(domain, []), horizon)
        return out

    def _release_domain(
        self, state: FleetState, domain: str, held: list[tuple[str, Finding]], horizon: int
    ) -> list[Action]:
        size = self.size(domain)
        out: list[Action] = []
        # after a restart, the newest action of the domain: earlier changes were reconciled then
        since = self._moved.get(domain)
        if since is None:
            dom = state.peek_domain(domain)
            since = max((state.hosts[h].last_ts for h in dom.hosts), default=dom.last_ts)
            since = max(since, dom.last_ts)
        for key, finding in held:
            out += self._changes_before(state, domain, size, since, finding.ts)
            out += self.planner.on_finding(state, finding, domain, size)
            self.decided.add(key)
            since = max(since, finding.ts)
        out += self._changes_before(state, domain, size, since, horizon + 1)
        if self.planner.work_signature(state, domain, size, horizon) is not None:
            out += self.planner.reconcile(state, domain, size, horizon)
        self._moved[domain] = max(since, horizon)
        return out

    def _changes_before(
        self, state: FleetState, domain: str, size: int, since: int, until: int
    ) -> list[Action]:
        """Reconcile at each time in (``since``, ``until``) the domain's capacity may change
        (``Planner.next_wake``: repairs due, outages starting or ending), in order: deferred work
        starts when room appears, and a train halts when the domain goes past its failure buffer."""
        out: list[Action] = []
        last = since
        changes = self.planner.wake_changes(state, domain, since)  # reconciling starts or ends no outage
        while (wake := self.planner.next_wake(state, domain, last, changes)) is not None and wake < until:
            out += self.planner.reconcile(state, domain, size, wake)
            last = wake
        return out


def _latest(*times: int | None) -> int | None:
    return max((t for t in times if t is not None), default=None)
