"""The actions the planner emits, built with deterministic ids and applied to the fleet state as they are.

An id is a hash of what the action is about (host, kind, operation, finding), so a decision taken
again after a crash or a re-delivery yields the same ids, and ``emit`` skips those already applied.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from schemas import FLEET
from streams.core.actions import REQUEST_KIND, Action
from streams.core.findings import Finding
from streams.core.fleet.lifecycle import FleetState, HostState, Operation, apply
from streams.core.ids import action_id
from streams.core.planning.budget import DomainBudget


class Hold(NamedTuple):
    """Why a host's next operation may not start now, and whether the host stays out for it meanwhile."""

    reason: str
    keep_out: bool  # a change waiting for its turn: applied before the host returns


Wait = Callable[[HostState, Operation], Hold | None]  # a host's next operation: None when it may start


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
    no turn now) is deferred; the host stays out, ``op`` verified, until it may (asked again at the
    domain's next reconcile) when the hold keeps it out (the change is applied before it returns), else
    it returns and the change is drained later.
    """
    nxt = host.waiting[0] if host.waiting else None
    hold = wait(host, nxt) if nxt is not None and wait is not None else None
    if nxt is not None and hold is None:
        if nxt.phase == "deferred":
            prev = op_action(state, out, host, nxt, "released", when, caused_by=prev)
        op_action(state, out, host, nxt, REQUEST_KIND[nxt.operation], when, caused_by=prev, reason=reason)
        return
    if hold is None or not hold.keep_out:
        op_action(state, out, host, op, "returned", when, caused_by=prev)
    if nxt is not None and hold is not None and nxt.phase != "deferred":
        op_action(state, out, host, nxt, "deferred", when, caused_by=nxt.last_action_id, reason=hold.reason)


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
