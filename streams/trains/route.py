"""A campaign's route through the fleet: its domains in visiting order, its hosts, and which domains it has passed.

A campaign visits its domains in name order, at most ``max_parallel_domains`` at once. A domain is
passed once each host in it has the version, or waits behind a repair for it. A domain with a change
started (a host out for it, or in burn-in) holds one of those slots until the change is verified;
the others go to the domains not passed yet, in order. A domain whose only open visits wait behind
repairs holds none, so a long repair does not hold the train: when the repair is verified the host's
domain is no longer passed, and its change starts (handed over, or drained later) only on a turn,
like any other (``turn``). Reads the inventory (``FleetView``) and the fold; decides nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from streams.core.fleet.lifecycle import FleetState, HostState
from streams.trains.campaign import CHANGE, Campaign

Reported = Mapping[str, tuple[str, int]]  # component -> (version, event time)


class FleetView(Protocol):
    """What a campaign needs of the inventory (``streams.core.inventory.Inventory`` is one)."""

    changes: int  # bumped by every record applied (the route's memo of scopes keys on it)

    def domains(self) -> dict[str, int]: ...
    def hosts_in(self, domain: str) -> frozenset[str]: ...
    def cluster_of(self, host_id: str) -> str: ...
    def domain_cluster(self, domain: str) -> str: ...
    def versions_of(self, host_id: str) -> Reported: ...


class Route:
    def __init__(self, view: FleetView) -> None:
        self.view = view
        self._passed: dict[tuple[int, str], set[str]] = {}  # (fold, campaign) -> domains passed
        self._domains: dict[str, tuple[int, list[str]]] = {}  # campaign -> (view.changes, its domains)
        self._sizes: dict[str, tuple[int, int]] = {}  # campaign -> (view.changes, its hosts in scope)
        # (fold, campaign, limit) -> (what the answer read, it): the domains' reconciles of one step ask alike
        self._todo: dict[tuple[int, str, int | None], tuple[tuple[int, ...], list[str]]] = {}

    def domains(self, camp: Campaign) -> list[str]:
        """The campaign's domains in visiting order."""
        memo = self._domains.get(camp.campaign_id)
        if memo is not None and memo[0] == self.view.changes:
            return memo[1]
        wanted = set(camp.hosts)
        found = [
            d
            for d in sorted(self.view.domains())
            if (not camp.scope or d in camp.scope or self.view.domain_cluster(d) in camp.scope)
            and (not wanted or wanted & self.view.hosts_in(d))
        ]
        self._domains[camp.campaign_id] = (self.view.changes, found)
        return found

    def targets(self, camp: Campaign, domain: str) -> list[str]:
        hosts = self.view.hosts_in(domain)
        return sorted(hosts & set(camp.hosts) if camp.hosts else hosts)

    def scope_size(self, camp: Campaign) -> int:
        memo = self._sizes.get(camp.campaign_id)
        if memo is None or memo[0] != self.view.changes:
            domains = self.domains(camp)
            memo = self._sizes[camp.campaign_id] = (
                self.view.changes,
                sum(len(self.targets(camp, d)) for d in domains),
            )
        return memo[1]

    def reported(self, state: FleetState, host_id: str, component: str) -> tuple[str, int] | None:
        """The host's newest report of ``component``: its agent's (inventory) or its side's record (actions)."""
        found = [
            r
            for r in (
                self.view.versions_of(host_id).get(component),
                state.trains.reported.get(host_id, {}).get(component),
            )
            if r is not None
        ]
        return max(found, key=lambda r: r[1]) if found else None

    def at_version(self, state: FleetState, camp: Campaign, host_id: str) -> bool:
        got = self.reported(state, host_id, camp.component)
        return got is not None and got[0] == camp.version

    def done(self, state: FleetState, camp: Campaign, host_id: str) -> bool:
        """Passed for good: its visit done, or no visit and already at the version."""
        visit = camp.visits.get(host_id)
        if visit is None:
            return self.at_version(state, camp, host_id)
        return visit.done_ts is not None

    def settled(self, state: FleetState, camp: Campaign, host_id: str) -> bool:
        """Passed: done, or queued behind a repair (revisited when the repair is verified)."""
        if self.done(state, camp, host_id):
            return True
        visit = camp.visits.get(host_id)
        host = state.hosts.get(host_id)
        return (
            visit is not None
            and visit.queued_ts is not None
            and host is not None
            and behind_repair(host, camp.campaign_id)
        )

    def busy(self, camp: Campaign) -> set[str]:
        """The domains with a change of the campaign started and not verified (a host out for it, in burn-in)."""
        return {camp.visits[h].domain for h in camp.tallies().open if camp.visits[h].requested_ts is not None}

    def domain_turn(self, state: FleetState, camp: Campaign, domain: str) -> bool:
        """Whether ``domain`` holds one of the campaign's ``max_parallel_domains`` slots (``todo``)."""
        return domain in self.todo(state, camp, camp.max_parallel_domains)

    def todo(self, state: FleetState, camp: Campaign, limit: int | None = None) -> list[str]:
        """The domains holding the campaign's slots, in order: every domain with a change started (``busy``),
        then those not passed yet, up to ``limit`` slots in all.

        A domain whose hosts are all done stays passed; one passed only because its changes wait behind
        repairs is read again (a repair verified takes it back: its host needs a turn).
        """
        # what the answer depends on: the fold's records (visits, hosts' work, versions on the log) and
        # the inventory (hosts, their agents' versions); unchanged between them, so is the answer
        read = (state.count, len(state.hosts), self.view.changes)
        key = (id(state.trains), camp.campaign_id, limit)
        memo = self._todo.get(key)
        if memo is not None and memo[0] == read:
            return list(memo[1])
        passed = self._passed.setdefault((id(state.trains), camp.campaign_id), set())
        busy = self.busy(camp)
        free = None if limit is None else limit - len(busy)
        fresh: list[str] = []  # domains not passed and with no change started, for the slots left
        for d in self.domains(camp):
            if free is not None and len(fresh) >= free:
                break
            if d in busy or d in passed:
                continue
            targets = self.targets(camp, d)
            if all(self.settled(state, camp, h) for h in targets):
                if all(self.done(state, camp, h) for h in targets):
                    passed.add(d)
                continue
            fresh.append(d)
        order = {d: i for i, d in enumerate(self.domains(camp))}
        out = sorted(busy | set(fresh), key=lambda d: order.get(d, len(order)))
        self._todo[key] = (read, out)
        return list(out)


def behind_repair(host: HostState, campaign_id: str) -> bool:
    """The campaign's change waits on the host behind other work (a repair) not verified yet: once the
    work ahead of it is verified, the change is next and asks for a turn."""
    mine = [op for op in host.waiting if op.operation == CHANGE and op.finding_id == campaign_id]
    ahead = host.current is not None and host.current.phase != "verified"
    return bool(mine) and (ahead or host.waiting[0] is not mine[0])
