"""The planner's side of campaigns: a finding cannot ask for a campaign's change."""

from __future__ import annotations

from streams.core.planning.admission import unplannable
from tests.streams import factories as f


def test_a_finding_recommending_a_change_is_unplannable() -> None:
    assert unplannable(f.finding(action="reboot").to_record()) is None
    assert unplannable(f.finding(action="change").to_record()) == (
        "unplannable_finding: unknown recommended_action 'change'"
    )
