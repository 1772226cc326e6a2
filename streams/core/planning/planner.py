"""Maintenance planner (after Meta's OpsPlanner): findings -> maintenance actions, within domain buffers.

Pure decisions over a ``FleetState``: every emitted action is applied to the state at once,
so the next decision sees it. Rules: at most ``capacity_buffer_pct`` of a maintenance domain
out at once (at least one host); one operation per host at a time (a second one waits and is
handed over without returning to service; a finding for an operation the host is already in or
queued for, or a weaker one, is recorded as ``absorbed``: ``streams.core.planning.absorption``); work beyond the buffer is deferred and released
as capacity returns (at each time it may: ``next_wake``); a host already out (an incident, an
operator's step) takes no capacity from its own operation; when the hosts with open failures exceed
``failure_buffer_pct`` the train halts (``train_halted``, by a new finding or an outage starting) instead of draining more; it resumes by
itself once they fall back within the buffer, or when a person resumes it (``resume``), after
which the backlog drains within capacity and the next new failure over the buffer halts it again.
Repairs complete in event time (``streams.core.planning.completion``): ``repaired``/``verified``/``returned`` at start + repair time (drawn,
seeded by the operation, from the times measured for the repair's cause and kind when known, else the policy's). Both buffers count every
host of the domain that is out, whatever took it out: the planner's own work, incidents the
fleet recorded and operators' steps (``streams.core.fleet.outages``), at the decision's event time.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from streams.core.actions import ABSORBED, ESCALATED, REQUEST_KIND, Action
from streams.core.findings import Finding
from streams.core.fleet.lifecycle import FleetState, Operation
from streams.core.planning.absorption import absorbing
from streams.core.planning.budget import DomainBudget, DomainBuffers
from streams.core.planning.completion import Completions, domain_hosts
from streams.core.planning.emit import emit, finding_action, halt_action, op_action, resume_action
from streams.core.planning.escalation import escalation_of
from streams.core.policy import Policy
from streams.trains.conductor import Conductor, FleetView


class Planner:
    """Turns findings and event-time ticks into actions for one maintenance domain at a time."""

    def __init__(
        self,
        policy: Policy,
        members: Callable[[str], Iterable[str]] | None = None,
        view: FleetView | None = None,
    ) -> None:
        """``members``: the domain's hosts per the inventory (those out without a planner action count too);
        ``view``: the inventory change campaigns read (none: campaigns are not moved)."""
        self.policy = policy
        self.buffers = DomainBuffers(policy, members)
        self.trains = Conductor(policy, view, self.buffers) if view is not None else None
        self.completions = Completions(policy, self.trains)

    def budgets(self, state: FleetState, domain: str, size: int, now: int | None = None) -> DomainBudget:
        """The domain's buffers at event time ``now`` (default: the newest event folded)."""
        return self.buffers.of(state, domain, size, now)

    # -- entry points -------------------------------------------------------------------------

    def on_finding(self, state: FleetState, finding: Finding, domain: str, size: int) -> list[Action]:
        """Record a finding (suspected) and move the domain forward at the finding's event time."""
        out: list[Action] = []
        # Repairs due by the finding's event time complete first, so the decision below depends on
        # event time only, never on whether a wall-clock tick happened to run reconcile() before.
        self.completions.complete_due(state, domain, finding.ts, out)
        if finding.finding_id in state.findings:
            pass  # re-delivered (a replay upstream): decided before
        elif (absorber := absorbing(state, finding.host_id, finding.recommended_action)) is not None:
            why = f"already in {absorber.operation} for {absorber.finding_id} ({absorber.phase})"
            emit(state, out, finding_action(finding, domain, ABSORBED, why))
        else:
            escalation = escalation_of(self.policy, state, finding)
            if escalation is not None:
                finding = replace(finding, recommended_action="rma")
            why = f"{finding.detector}: {finding.error_class} x{finding.count} on {finding.scope_key}"
            suspected = finding_action(finding, domain, "suspected", why)
            emit(state, out, suspected)
            if escalation is not None:
                escalated = finding_action(finding, domain, ESCALATED, escalation)
                emit(state, out, replace(escalated, caused_by=suspected.action_id))
            self._maybe_halt(state, domain, size, finding.ts, out)
        out.extend(self.reconcile(state, domain, size, finding.ts))
        return out

    def reconcile(self, state: FleetState, domain: str, size: int, now: int) -> list[Action]:
        """Complete due repairs, halt or resume the train, start waiting work within the buffer.

        Called at every time the domain's capacity may change (``next_wake``), not only at findings.
        """
        out: list[Action] = []
        self.completions.complete_due(state, domain, now, out)
        self._maybe_halt(state, domain, size, now, out)
        self._maybe_resume(state, domain, size, now, out)
        if self.trains is not None:  # change campaigns queue within the buffer before waiting work starts
            out.extend(self.trains.step(state, domain, size, now))
        self._start_waiting(state, domain, size, now, out)
        return out

    def next_due(self, state: FleetState, domain: str) -> int | None:
        """Event time of the next repair completion in the domain (for tick scheduling)."""
        return self.completions.next_due(state, domain)

    def next_wake(
        self, state: FleetState, domain: str, after: int, changes: list[int] | None = None
    ) -> int | None:
        """The first event time after ``after`` at which the domain's capacity may change.

        A repair falls due, or an outage of one of its hosts (an incident, an operator's step)
        starts or ends: each one may free room for deferred work, or push the domain past its
        failure buffer, so the planner reconciles there and not only when a finding arrives.
        ``changes``: the domain's outage changes (``wake_changes``) when the caller steps through many
        wakes, so that each step does not scan the hosts' outage history again.
        """
        times = [
            t
            for h in domain_hosts(state, domain)
            if h.current
            and h.current.started_ts is not None
            and (t := self.completions.due(state, h.current)) > after
        ]
        if changes is None:
            changes = self.wake_changes(state, domain, after)
        i = bisect.bisect_right(changes, after)
        times += changes[i : i + 1]
        return min(times) if times else None

    def wake_changes(self, state: FleetState, domain: str, after: int) -> list[int]:
        """The times an outage of one of the domain's hosts starts or ends, sorted (those up to ``after``
        too: ``next_wake`` bisects), read from the outages' per-domain index, not rescanned."""
        return state.outages.domain_changes(domain, self.buffers.hosts(state, domain))

    def work_signature(self, state: FleetState, domain: str, size: int, now: int) -> tuple[Any, ...] | None:
        """Whether ``reconcile`` at event time ``now`` may change the domain: a signature of what it
        would act on (a worker asks again only when it changes), or None when it has nothing to do.

        Work is a repair due by ``now``, queued work with room in the buffer while the train runs,
        or a halted train whose failures are back within the failure buffer.
        """
        b = self.budgets(state, domain, size, now)  # outages end in event time, like repairs
        due = self.next_due(state, domain)
        work = (
            (due is not None and due <= now)
            or (
                b.queued
                and not b.halted
                and (b.out < b.capacity or self.buffers.free_start(state, domain, now))
            )
            or (b.halted and b.failing <= b.failure_budget)
            or self._halt_due(state, b, now)
        )
        trains = self.trains.signature(state, domain, now) if self.trains is not None else None
        if trains is not None:  # ``work`` too: a repair falling due moves its domain while a campaign is open
            return (due, b.out, b.queued, b.halted, bool(work), trains)
        return (due, b.out, b.queued, b.halted, state.count) if work else None

    # -- steps --------------------------------------------------------------------------------

    def repair_time_ms(self, state: FleetState, op: Operation) -> int:
        """The operation's repair time (``RepairTimes``): the same in every worker and replay."""
        return self.completions.repair_times.of(state, op)

    def _maybe_halt(self, state: FleetState, domain: str, size: int, now: int, out: list[Action]) -> None:
        """Halt when a failure pushes the domain past its failure buffer, whatever brought the failure:
        a finding, or an incident or an operator's step starting (checked at each of their times)."""
        b = self.budgets(state, domain, size, now)
        if self._halt_due(state, b, now):
            emit(state, out, halt_action(state, b, now))

    def _halt_due(self, state: FleetState, b: DomainBudget, now: int) -> bool:
        """Over the failure buffer, running, and some failure began since the train last resumed.

        After a person resumes a train still over its buffer (``resume``), only a new failure halts
        it again; an automatic resume happens within the buffer, so any return above it is new.
        """
        if b.halted or b.failing <= b.failure_budget:
            return False
        resumed = state.peek_domain(b.domain).resumed_ts
        return resumed is None or self.buffers.newest_failure(state, b.domain, now) > resumed

    def resume(self, state: FleetState, domain: str, now: int, reason: str) -> list[Action]:
        """Resume a halted train (automatically, or by a person: ``fleetpulse detect-resume``)."""
        if not state.peek_domain(domain).halted:
            return []
        out: list[Action] = []
        emit(state, out, resume_action(state, domain, now, reason))
        return out

    def _maybe_resume(self, state: FleetState, domain: str, size: int, now: int, out: list[Action]) -> None:
        b = self.budgets(state, domain, size, now)
        if b.halted and self.policy.planner.auto_resume and b.failing <= b.failure_budget:
            out.extend(
                self.resume(
                    state, domain, now, f"{b.failing} hosts failing <= failure buffer {b.failure_budget}"
                )
            )

    def _start_waiting(self, state: FleetState, domain: str, size: int, now: int, out: list[Action]) -> None:
        self._finish_drains(state, domain, out)
        dom = state.peek_domain(domain)
        capacity = self.buffers.capacity(state, domain, size)
        for op_id in list(dom.queue):
            host = state.hosts[state.op_hosts[op_id]]
            op = state.operation(host.host_id, op_id)
            assert op is not None
            if host.current is not None or host.waiting[0] is not op or op.suspected_ts > now:
                continue  # serialised: the host is busy or has earlier work; handed over later
            # a host already out (an incident, an operator's step) costs no capacity to take in
            away = state.outages.out_at(host.host_id, now)
            why: str | None = None
            if dom.halted:
                why = "train halted"
            elif not away and self.buffers.counts(state, domain, now)[0] >= capacity:
                why = f"domain at capacity ({capacity} hosts out)"
            elif (wait := self.completions.wait(state)) is not None and (hold := wait(host, op)) is not None:
                why = hold.reason  # a change starts on its domain's turn in its running campaign only
            if why is not None:
                if op.phase != "deferred":
                    op_action(state, out, host, op, "deferred", now, caused_by=op.last_action_id, reason=why)
                continue
            prev = op.last_action_id
            if op.phase == "deferred":
                prev = op_action(state, out, host, op, "released", now, caused_by=prev)
            prev = op_action(state, out, host, op, "drain_requested", now, caused_by=prev)
            prev = op_action(state, out, host, op, "drained", now, caused_by=prev)
            op_action(state, out, host, op, REQUEST_KIND[op.operation], now, caused_by=prev)

    def _finish_drains(self, state: FleetState, domain: str, out: list[Action]) -> None:
        """A drain a crash cut short (the log ends at ``drain_requested`` or ``drained``): emit the rest.

        The steps of a drain are published one by one; a worker that dies between them leaves an
        operation no finding, queue or due time would ever move again, and its host out for good.
        The ids are deterministic, so steps already in the log are not emitted twice.
        """
        for host in domain_hosts(state, domain):
            op = host.current
            if op is None or op.phase not in ("draining", "drained"):
                continue
            prev = op.last_action_id
            if op.phase == "draining":
                prev = op_action(state, out, host, op, "drained", host.last_ts, caused_by=prev)
            op_action(state, out, host, op, REQUEST_KIND[op.operation], host.last_ts, caused_by=prev)
