"""Retirement (AIReSim's threshold removal): a host whose repairs failed N times within W leaves for good.

A repair failed when its host was flagged again soon after it returned, which is exactly what the
planner's escalation records (``escalated``). So retirement reads the planner's own actions: the
N-th escalation of a host within ``retire_within`` adds a ``retired`` action (a page) after it.
The escalated RMA still runs; the host simply never comes back from it. Pure over the action log:
the same actions give the same retirements, so a worker rebuilds it by folding ``fleet.actions``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from streams.core.actions import ESCALATED, RETIRED, Action
from streams.core.ids import action_id
from streams.core.policy import Policy


@dataclass(slots=True)
class Retirement:
    """Escalations per host (event times) and the hosts already retired."""

    policy: Policy
    failed: dict[str, list[int]] = field(default_factory=dict)
    retired: set[str] = field(default_factory=set)

    def on_actions(self, actions: Iterable[Action]) -> list[Action]:
        """The ``retired`` actions the given actions (in order) call for; none while retirement is off."""
        p = self.policy.planner
        out: list[Action] = []
        if p.retire_after <= 0:
            return out
        for a in actions:
            if a.kind == RETIRED:
                self.retired.add(a.host_id)
            if a.kind != ESCALATED or a.host_id in self.retired:
                continue
            times = [t for t in self.failed.get(a.host_id, []) if a.ts - t <= p.retire_within] + [a.ts]
            self.failed[a.host_id] = times
            if len(times) >= p.retire_after:
                self.retired.add(a.host_id)
                days = p.retire_within / 86_400_000
                out.append(
                    Action(
                        action_id=action_id(a.host_id, RETIRED, a.operation, a.action_id),
                        kind=RETIRED,
                        host_id=a.host_id,
                        cluster=a.cluster,
                        domain=a.domain,
                        operation=a.operation,
                        ts=a.ts,
                        finding_id=a.finding_id,
                        rule=a.rule,
                        reason=f"{len(times)} failed repairs within {days:g} d (retire_after {p.retire_after})",
                        caused_by=a.action_id,
                    )
                )
        return out
