"""One planner message decided, the same for every runner: a finding, a tick or progress, then retirement.

The worker's planner shell decides each message of its planner partitions here; ``DetectionCore`` (the
backtest and the twin) decides its findings, ticks and progress here too. So an escalation is followed
by its host's retirement (``planner.retire_after``) in one place, whatever runs the planner.
"""

from __future__ import annotations

from collections.abc import Callable

from streams.core.actions import Action
from streams.core.findings import Finding
from streams.core.fleet.lifecycle import FleetState
from streams.core.messages import PlannerMessage, PlanProgress, PlanTick
from streams.core.planning.order import Mark, OrderedPlan
from streams.core.planning.planner import Planner
from streams.core.planning.retirement import retirements


def decide(
    planner: Planner,
    plan: OrderedPlan | None,
    fleet: FleetState,
    msg: PlannerMessage,
    size: Callable[[str], int],
) -> list[Action]:
    """The actions for ``msg``: in event-time order through ``plan``, or as they come when it is None;
    each escalation followed by its host's retirement when the policy says so (folded into ``fleet``)."""
    actions: list[Action]
    if isinstance(msg, PlanProgress):
        marks = [(m.source, Mark(m.ts, m.idle)) for m in msg.marks]
        actions = plan.progress(fleet, marks) if plan is not None else []
    elif isinstance(msg, PlanTick):
        actions = planner.reconcile(fleet, msg.domain, size(msg.domain), msg.ts)
    elif plan is not None:
        actions = plan.finding(fleet, Finding.from_record(msg.finding), msg.domain)
    else:
        actions = planner.on_finding(fleet, Finding.from_record(msg.finding), msg.domain, size(msg.domain))
    return actions + retirements(planner.policy, fleet, actions)
