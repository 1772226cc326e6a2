"""The actions the planner emits, built with deterministic ids and applied to the fleet state as they are.

An id is a hash of what the action is about (host, kind, operation, finding), so a decision taken
again after a crash or a re-delivery yields the same ids, and ``emit`` skips those already applied.
"""

from __future__ import annotations

from collections.abc import Callable

from schemas import FLEET
from streams.core.actions import REQUEST_KIND, Action
from streams.core.findings import Finding
from streams.core.fleet.lifecycle import FleetState, HostState, Operation, apply
from streams.core.ids import action_id
from streams.core.planning.budget import DomainBudget

# why a host's next operation may not start now (None: it may): a change waiting for its campaign's turn
Wait = Callable[[HostState, Operation], str | None]


def emit(state: FleetState, out: list[Action], action: Action) -> None:
    if action.action_id not in state.applied:
        apply(state, action)
        out.append(action)


def finding_action(finding: Finding, domain: str, kind: str, reason: str) -> Action:
    """The action recording what became of a finding (``suspected``, ``absorbed`` or ``escalated``)."""
    return Action(
        action_id=action_id(finding.host_id, kind, finding.recommended_action, finding.finding_id),
        kind=kind,
        host_id=finding.host_id,
        cluster=finding.cluster,
        domain=domain,
        operation=finding.recommended_action,
        ts=finding.ts,
        finding_id=finding.finding_id,
        rule=finding.rule,
        reason=reason,
    )


def op_action(
    state: FleetState,
    out: list[Action],
    host: HostState,
    op: Operation,
    kind: str,
    ts: int,
    *,
    caused_by: str | None,
    reason: str = "",
) -> str:
    """Emit one step of a host's operation; its id (the next step's ``caused_by``)."""
    action = Action(
        action_id=action_id(host.host_id, kind, op.operation, op.finding_id),
        kind=kind,
        host_id=host.host_id,
        cluster=host.cluster,
        domain=host.domain,
        operation=op.operation,
        ts=ts,
        finding_id=op.finding_id,
        rule=op.rule,
        reason=reason,
        caused_by=caused_by,
    )
    emit(state, out, action)
    return action.action_id


def hand_over_or_return(
    state: FleetState,
    out: list[Action],
    host: HostState,
    op: Operation,
    when: int,
    prev: str | None,
    reason: str = "handed over",
    wait: Wait | None = None,
) -> None:
    """After ``op`` is verified: start the host's next operation without returning it in between, else return it.

    A next operation that may not start yet (``wait`` says why: a change whose campaign gives its domain
    no turn now) is deferred, and the host stays out, ``op`` verified, until it may (asked again at the
    domain's next reconcile): the change is still applied before the host returns.
    """
    if not host.waiting:
        op_action(state, out, host, op, "returned", when, caused_by=prev)
        return
    nxt = host.waiting[0]
    why = wait(host, nxt) if wait is not None else None
    if why is not None:
        if nxt.phase != "deferred":
            op_action(state, out, host, nxt, "deferred", when, caused_by=nxt.last_action_id, reason=why)
        return
    if nxt.phase == "deferred":
        prev = op_action(state, out, host, nxt, "released", when, caused_by=prev)
    op_action(state, out, host, nxt, REQUEST_KIND[nxt.operation], when, caused_by=prev, reason=reason)


def halt_action(state: FleetState, b: DomainBudget, now: int) -> Action:
    """The domain's train halts: ``b`` shows more hosts failing than its failure buffer allows."""
    return Action(
        action_id=action_id(
            b.domain, "train_halted", "drain", f"halt-{state.peek_domain(b.domain).halts + 1}"
        ),
        kind="train_halted",
        host_id=FLEET,
        cluster=FLEET,
        domain=b.domain,
        operation="drain",
        ts=now,
        reason=f"{b.failing} hosts failing > failure buffer {b.failure_budget} of {b.size}"
        + (f" ({b.out_elsewhere} out for incidents or operators' steps)" if b.out_elsewhere else ""),
    )


def resume_action(state: FleetState, domain: str, now: int, reason: str) -> Action:
    halt = state.peek_domain(domain).halt_action_id
    return Action(
        action_id=action_id(domain, "train_resumed", "drain", halt or "-"),
        kind="train_resumed",
        host_id=FLEET,
        cluster=FLEET,
        domain=domain,
        operation="drain",
        ts=now,
        caused_by=halt,
        reason=reason,
    )
