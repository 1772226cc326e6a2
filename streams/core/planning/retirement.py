"""Retirement (AIReSim's threshold removal): a host whose repairs failed N times within W leaves for good.

A repair failed when its host was flagged again soon after it returned, which is exactly what the
planner's escalation records (``escalated``). So retirement reads the planner's own actions: the
N-th escalation of a host within ``retire_within`` adds a ``retired`` action (a page) after it.
The escalated RMA still runs; the host simply never comes back from it. Pure over the action log:
the same actions give the same retirements, so a worker rebuilds it by folding ``fleet.actions``.
``retirements`` decides from the folded fleet state (each host's escalation times), so a detect worker,
which rebuilds that state from the log and its snapshots, retires exactly as ``DetectionCore`` (the
backtest, the twin) does; both call it through ``streams.core.planning.decide``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from streams.core.actions import ESCALATED, RETIRED, Action
from streams.core.fleet.lifecycle import FleetState
from streams.core.ids import action_id
from streams.core.planning.emit import emit
from streams.core.policy import Policy


def retired_after(policy: Policy, escalation: Action, failed: int) -> Action:
    """The ``retired`` action after ``escalation``, the host's ``failed``-th failed repair within the window."""
    p = policy.planner
    return replace(  # the escalation's host, domain, operation, time, finding and rule
        escalation,
        action_id=action_id(escalation.host_id, RETIRED, escalation.operation, escalation.action_id),
        kind=RETIRED,
        reason=f"{failed} failed repairs within {p.retire_within / 86_400_000:g} d (retire_after {p.retire_after})",
        caused_by=escalation.action_id,
    )


def retirements(policy: Policy, state: FleetState, decided: Iterable[Action]) -> list[Action]:
    """The ``retired`` actions that ``decided`` (already folded into ``state``) calls for, applied to ``state``.

    Reads each escalated host's escalation times from the fold, so it needs no memory of its own.
    """
    p = policy.planner
    out: list[Action] = []
    if p.retire_after <= 0:
        return out
    for a in decided:
        host = state.hosts.get(a.host_id)
        if a.kind != ESCALATED or host is None or host.retired:
            continue
        failed = sum(1 for t in host.escalated if 0 <= a.ts - t <= p.retire_within)
        if failed >= p.retire_after:
            emit(state, out, retired_after(policy, a, failed))
    return out
