"""The planner's side of campaigns: a finding cannot ask for a campaign's change."""

from __future__ import annotations

from streams.core.actions import Action
from streams.core.fleet.lifecycle import FleetState, apply
from streams.core.planning.admission import unplannable
from streams.core.planning.escalation import escalation_of
from streams.core.policy import load_policy
from tests.streams import factories as f


def test_a_finding_recommending_a_change_is_unplannable() -> None:
    assert unplannable(f.finding(action="reboot").to_record()) is None
    assert unplannable(f.finding(action="change").to_record()) == (
        "unplannable_finding: unknown recommended_action 'change'"
    )


def test_a_host_flagged_soon_after_its_change_is_not_escalated_as_a_failed_repair() -> None:
    policy = load_policy()
    state = FleetState()
    kinds = (
        "suspected",
        "drain_requested",
        "drained",
        "change_requested",
        "change_applied",
        "verified",
        "returned",
    )
    for operation, cause in (("change", "trn-1"), ("reboot", "f-0")):
        host = f"h-{operation}"
        for kind in (
            kinds
            if operation == "change"
            else (
                "suspected",
                "drain_requested",
                "drained",
                "reboot_requested",
                "repaired",
                "verified",
                "returned",
            )
        ):
            apply(
                state,
                Action(
                    action_id=f"{host}-{kind}",
                    kind=kind,
                    host_id=host,
                    cluster="c0",
                    domain="d",
                    operation=operation,
                    ts=f.START_TS,
                    finding_id=cause,
                ),
            )
        assert state.hosts[host].returned_from == operation
    later = f.START_TS + f.DAY
    assert escalation_of(policy, state, f.finding("h-change", ts=later, action="reboot")) is None
    assert escalation_of(policy, state, f.finding("h-reboot", ts=later, action="reboot")) is not None
