"""Repairs completing in event time, and the hand-over to a host's next operation (pure).

Kept apart from the planner's admission rules (``streams.core.planning.planner``): when a repair is
due (its drawn repair time, ``RepairTimes``), the ``repaired``/``verified`` chain at that time, and
what the host does next (returns, or hands over to its waiting work; a campaign's change waits for
its domain's turn, ``Conductor.turn``) is one concern the finding path and the ticks both run first.
"""

from __future__ import annotations

from streams.core.actions import Action
from streams.core.fleet.lifecycle import FleetState, HostState, Operation
from streams.core.planning.emit import Wait, hand_over_or_return, op_action
from streams.core.planning.repair_times import RepairTimes
from streams.core.policy import Policy
from streams.trains.campaign import CHANGE
from streams.trains.conductor import Conductor


def domain_hosts(state: FleetState, domain: str) -> list[HostState]:
    """The domain's hosts in the fold, in name order."""
    return [state.hosts[h] for h in sorted(state.peek_domain(domain).hosts)]


class Completions:
    """When a domain's repairs fall due, and their completion chain up to the hand-over."""

    def __init__(self, policy: Policy, trains: Conductor | None) -> None:
        self.repair_times = RepairTimes(policy)
        self.trains = trains

    def due(self, state: FleetState, op: Operation) -> int:
        return (op.started_ts or 0) + self.repair_times.of(state, op)

    def next_due(self, state: FleetState, domain: str) -> int | None:
        """Event time of the next repair completion in the domain (for tick scheduling)."""
        dues = [
            self.due(state, h.current)
            for h in domain_hosts(state, domain)
            if h.current and h.current.started_ts is not None and h.current.operation != CHANGE
        ]
        return min(dues) if dues else None

    def complete_due(self, state: FleetState, domain: str, now: int, out: list[Action]) -> None:
        """Complete every repair due by ``now``, earliest first, including work handed over meanwhile.

        One pass over the repairs open at the start would leave an operation handed over at T and
        due before ``now`` open, and the halt decision that follows would count a host that is back.
        """
        held: set[str] = set()  # verified, their next operation (a change) waiting for its turn
        while True:
            earliest = min(
                (
                    (self.due(state, h.current), h.host_id)
                    for h in domain_hosts(state, domain)
                    if h.current and self.in_repair(h) and h.host_id not in held
                ),
                default=None,
            )
            if earliest is None or earliest[0] > now:
                break
            when, host_id = earliest
            host = state.hosts[host_id]
            op = host.current
            assert op is not None
            prev = op.last_action_id
            # kept out after its repair for its change's turn (``hand_over_or_return``): it starts now
            nxt = host.waiting[0] if host.waiting else None
            if (
                op.phase == "verified"
                and nxt is not None
                and nxt.operation == CHANGE
                and nxt.phase == "deferred"
            ):
                when = now
            for kind in ("repaired", "verified"):
                prev = op_action(state, out, host, op, kind, when, caused_by=prev)
            hand_over_or_return(state, out, host, op, when, prev, wait=self.wait(state))
            if host.current is op:
                held.add(host_id)

    def wait(self, state: FleetState) -> Wait | None:
        """Why a host's next operation may not start now: a change needs its domain's turn (``Conductor.turn``)."""
        trains = self.trains
        if trains is None:
            return None
        return lambda host, op: trains.turn(state, host, op)

    @staticmethod
    def in_repair(host: HostState) -> bool:
        """In repair, or past it in a completion chain a crash cut short (its missing steps are re-emitted)."""
        return (
            host.current is not None
            and host.current.phase in ("in_repair", "repaired", "verified")
            and host.current.started_ts is not None
            and host.current.operation != CHANGE  # a campaign's change completes by the host's report
        )
