"""A maintenance domain's two buffers at an event time: how many hosts may be out, how many may fail.

Both count every host of the domain that is out, whatever took it out: the planner's own work,
incidents the fleet recorded and operators' steps (``streams.core.fleet.outages``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ground.domain_buffer import budget
from streams.core.fleet.lifecycle import FleetState
from streams.core.policy import Policy


@dataclass(frozen=True, slots=True)
class DomainBudget:
    domain: str
    size: int
    out: int
    capacity: int
    failing: int
    failure_budget: int
    halted: bool
    queued: int
    out_elsewhere: int = 0  # of ``out``: hosts out for incidents or operators' steps, not the planner's work


class DomainBuffers:
    """Counts a domain's hosts out and failing; ``members`` adds the inventory's hosts the fleet state has not seen."""

    def __init__(self, policy: Policy, members: Callable[[str], Iterable[str]] | None = None) -> None:
        self.policy = policy
        self.members = members

    def hosts(self, state: FleetState, domain: str) -> set[str]:
        hosts = set(state.peek_domain(domain).hosts)
        if self.members is not None:
            hosts.update(self.members(domain))
        return hosts

    def retired(self, state: FleetState, domain: str) -> int:
        """The domain's hosts retired for good: no longer in it, neither out nor failing."""
        return sum(
            1 for h in self.hosts(state, domain) if (host := state.hosts.get(h)) is not None and host.retired
        )

    def counts(self, state: FleetState, domain: str, now: int) -> tuple[int, int, int]:
        """(out, failing, out for incidents or operators' steps only) among the domain's hosts at ``now``."""
        out = failing = elsewhere = 0
        for host_id in self.hosts(state, domain):
            host = state.hosts.get(host_id)
            if host is not None and host.retired:
                continue
            away = state.outages.out_at(host_id, now)
            own_out = host is not None and host.is_out
            out += own_out or away
            failing += (host is not None and host.has_failure) or away
            elsewhere += away and not own_out
        return out, failing, elsewhere

    def capacity(self, state: FleetState, domain: str, size: int) -> int:
        size = max(size, len(self.hosts(state, domain))) - self.retired(state, domain)
        return budget(size, self.policy.planner.capacity_buffer_pct)

    def of(self, state: FleetState, domain: str, size: int, now: int | None = None) -> DomainBudget:
        """The domain's buffers at event time ``now`` (default: the newest event folded)."""
        size = max(size, len(self.hosts(state, domain))) - self.retired(state, domain)
        out, failing, elsewhere = self.counts(state, domain, state.clock if now is None else now)
        return DomainBudget(
            domain=domain,
            size=size,
            out=out,
            capacity=budget(size, self.policy.planner.capacity_buffer_pct),
            failing=failing,
            failure_budget=budget(size, self.policy.planner.failure_buffer_pct),
            halted=state.peek_domain(domain).halted,
            queued=len(state.peek_domain(domain).queue),
            out_elsewhere=elsewhere,
        )

    def newest_failure(self, state: FleetState, domain: str, now: int) -> int:
        """When the newest failure still open at ``now`` among the domain's hosts began (-1: none)."""
        starts = [-1]
        for host_id in self.hosts(state, domain):
            starts += [o.start_ts for o in state.outages.open_at(host_id, now)]
            host = state.hosts.get(host_id)
            if host is not None:
                ops = ([host.current] if host.current else []) + host.waiting
                starts += [op.suspected_ts for op in ops if op.suspected_ts <= now]
        return max(starts)

    def free_start(self, state: FleetState, domain: str, now: int) -> bool:
        """Some queued operation could start on a host already out at ``now`` (it takes no capacity)."""
        for op_id in state.peek_domain(domain).queue:
            host = state.hosts[state.op_hosts[op_id]]
            first = host.current is None and host.waiting and host.waiting[0].op_id == op_id
            if first and state.outages.out_at(host.host_id, now):
                return True
        return False
