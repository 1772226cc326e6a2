"""The planner's decisions for change campaigns in one maintenance domain at an event time (pure).

A visit is a planner operation, ``change``: it is queued only on the domain's turn in the campaign's
route (``streams.trains.route``) and while the domain's capacity buffer has room (counting every
host out, whatever took it out) so repairs keep their place, and a host in repair has the change
queued behind its repair, never drained while in it, never visited twice; it holds no slot of the
route while it waits (a long repair does not hold the train), and when the repair is verified the
change asks for a turn (``turn``): handed over when its domain has one, the host kept out until then
(while the campaign is paused or halted the host returns, and its change waits). The host side
completes the change (its agent reports the version, or ``fleetpulse ops record HOST
change_applied``); a burn-in with no hardware finding verifies it, then it returns.
How many may start, and when the train halts by itself: ``streams.trains.gate``.
"""

from __future__ import annotations

from typing import Any

from streams.core.actions import Action
from streams.core.fleet.lifecycle import FleetState, HostState, Operation
from streams.core.ids import action_id
from streams.core.planning.budget import DomainBuffers
from streams.core.planning.emit import Hold, Wait, emit, hand_over_or_return, op_action
from streams.core.policy import Policy
from streams.trains.campaign import CHANGE, Campaign
from streams.trains.gate import Gate, campaign_action
from streams.trains.route import FleetView, Route

__all__ = ["Conductor", "FleetView"]


class Conductor:
    def __init__(self, policy: Policy, view: FleetView, buffers: DomainBuffers) -> None:
        self.policy, self.view, self.buffers = policy, view, buffers
        self.route = Route(view)
        self.gate = Gate(policy, self.route)

    def step(self, state: FleetState, domain: str, size: int, now: int) -> list[Action]:
        out: list[Action] = []
        for camp in sorted(state.trains.campaigns.values(), key=lambda c: (c.started_ts, c.campaign_id)):
            if camp.status == "completed":
                continue
            self._complete_visits(state, camp, domain, now, out)
            if camp.status == "aborted":
                self._withdraw(state, camp, domain, now, out)
            if camp.status != "running" or self.gate.check(state, camp, domain, now, out):
                continue
            self._queue(state, camp, domain, size, now, out)
            # every queued visit done (a visit not open is done or was never queued)
            done = all(
                v.done_ts is not None
                for _, v in camp.tallies().open_visits(camp.visits)
                if v.queued_ts is not None
            )
            if done and not self.route.todo(state, camp, 1):
                emit(
                    state,
                    out,
                    campaign_action(camp, "campaign_completed", domain, now, "every host has the version"),
                )
        return out

    def turn(self, state: FleetState, host: HostState, op: Operation) -> Hold | None:
        """Why ``op`` may not start on ``host`` now (None: it may): a change whose domain holds no slot in its
        campaign (the host is kept out for it: its turn comes when a slot frees), or whose campaign is not
        running (the host returns: the change waits for a resume, or is withdrawn by an abort)."""
        camp = state.trains.campaigns.get(op.finding_id) if op.operation == CHANGE else None
        if camp is None:
            return None
        if camp.status != "running":
            return Hold(f"campaign {camp.campaign_id} {camp.status}", keep_out=False)
        if self.route.domain_turn(state, camp, host.domain):
            return None
        why = f"waiting for a turn in campaign {camp.campaign_id} (max_parallel_domains {camp.max_parallel_domains})"
        return Hold(why, keep_out=True)

    def due_domains(self, state: FleetState) -> set[str]:
        """The domains an open campaign moves in next: its turn's, or its first one to close it (a domain with
        no host acted on yet is in no fold: a worker ticking only the fold's domains never starts it)."""
        due: set[str] = set()
        for camp in state.trains.campaigns.values():
            if camp.status != "completed":
                due |= set(self.route.todo(state, camp, camp.max_parallel_domains)) or set(
                    self.route.domains(camp)[:1]
                )
        return due

    def signature(self, state: FleetState, domain: str, now: int) -> tuple[Any, ...] | None:
        """What ``step`` would act on in ``domain`` (None: no campaign open), for the planner's ticks.

        Of the step windows only the step-time verdict's halt is in it, not their count: a ``steps_counted``
        action (one a cluster and window) moves no domain unless it halts the campaign, and then the first
        domain ticked halts it, as when every domain was moved after each window.
        """
        open_ = [c for c in state.trains.campaigns.values() if c.status != "completed"]
        if not open_:
            return None
        burn_in = self.policy.trains.burn_in
        return tuple(
            (
                c.campaign_id,
                c.status,
                c.accepted,
                len(c.visits),
                c.upgraded,
                len(c.faults),
                self.gate.step_halts(state, c),  # a window that does not flip it changes nothing here
                self.gate.soak_passed(c, now),
                c.tallies().verified,
                sum(
                    v.applied_ts is not None and v.done_ts is None and v.applied_ts + burn_in <= now
                    for _, v in c.tallies().open_visits(c.visits)
                ),
                len(state.trains.reported),
            )
            for c in open_
        ) + (self.view.changes,)

    def _queue(
        self, state: FleetState, camp: Campaign, domain: str, size: int, now: int, out: list[Action]
    ) -> None:
        if state.peek_domain(domain).halted or not self.route.domain_turn(state, camp, domain):
            return  # the failure buffer halted the domain's train, or it is not this domain's turn
        budget = self.gate.budget(state, camp)
        room = self.buffers.capacity(state, domain, size) - self.buffers.counts(state, domain, now)[0]
        for host_id in self.route.targets(camp, domain):
            visit = camp.visits.get(host_id)
            if (
                visit is not None and (visit.queued_ts is not None or visit.done_ts is not None)
            ) or self.route.at_version(state, camp, host_id):
                continue
            host = state.hosts.get(host_id)
            in_repair = host is not None and host.has_failure
            if not in_repair and (room <= 0 or budget <= 0):
                continue  # a host in repair waits there for its change; any other needs room and budget
            room -= not in_repair
            budget -= not in_repair
            previous = self.route.reported(state, host_id, camp.component)
            emit(
                state, out, self._visit_action(camp, host_id, domain, now, previous[0] if previous else None)
            )

    def _visit_action(
        self, camp: Campaign, host_id: str, domain: str, now: int, previous: str | None
    ) -> Action:
        return Action(
            action_id=action_id(host_id, "suspected", CHANGE, camp.campaign_id),
            kind="suspected",
            host_id=host_id,
            cluster=self.view.cluster_of(host_id),
            domain=domain,
            operation=CHANGE,
            ts=now,
            finding_id=camp.campaign_id,
            rule=previous,
            reason=f"campaign {camp.campaign_id}: {camp.component} {previous or '?'} -> {camp.version}",
        )

    def _complete_visits(
        self, state: FleetState, camp: Campaign, domain: str, now: int, out: list[Action]
    ) -> None:
        burn_in = self.policy.trains.burn_in
        for host_id in sorted(state.peek_domain(domain).hosts):
            host = state.hosts[host_id]
            op = host.current
            if op is None or op.operation != CHANGE or op.finding_id != camp.campaign_id:
                continue
            visit = camp.visits[host_id]
            if op.phase == "in_repair":
                got = self.route.reported(state, host_id, camp.component)
                if got is not None and got[0] == camp.version and got[1] >= (op.started_ts or 0):
                    op_action(
                        state,
                        out,
                        host,
                        op,
                        "change_applied",
                        max(now, got[1]),
                        caused_by=op.last_action_id,
                        reason=f"{camp.component} {got[0]} reported",
                    )
                continue
            if op.phase == "repaired" and visit.applied_ts is not None:
                failed = next((w for w in host.waiting if w.operation != CHANGE), None)
                if failed is None and now < visit.applied_ts + burn_in:
                    continue
                why = f"burn-in failed: {failed.operation} for {failed.rule}" if failed else "burn-in passed"
                prev = op_action(
                    state, out, host, op, "verified", now, caused_by=op.last_action_id, reason=why
                )
                hand_over_or_return(state, out, host, op, now, prev, wait=self._wait(state))
            elif op.phase == "verified":  # a crash cut the chain short
                hand_over_or_return(state, out, host, op, now, op.last_action_id, wait=self._wait(state))

    def _wait(self, state: FleetState) -> Wait:
        return lambda host, op: self.turn(state, host, op)

    def _withdraw(self, state: FleetState, camp: Campaign, domain: str, now: int, out: list[Action]) -> None:
        """Take back an aborted campaign's visits that have not started (hosts changing finish their change)."""
        for host_id in sorted(state.peek_domain(domain).hosts):
            host = state.hosts[host_id]
            for op in list(host.waiting):
                if op.operation == CHANGE and op.finding_id == camp.campaign_id:
                    op_action(
                        state,
                        out,
                        host,
                        op,
                        "withdrawn",
                        now,
                        caused_by=op.last_action_id,
                        reason="campaign aborted",
                    )
