"""The detect worker's planner retires a host whose repairs kept failing (``planner.retire_after``), as the twin does.

The decision reads the folded fleet state only, so a worker that restarted (its state folded again from
``fleet.actions``) retires on the same escalation as one that never stopped.
"""

from __future__ import annotations

from streams.core.actions import Action
from streams.core.fleet.lifecycle import FleetState, replay
from streams.core.messages import PlanFinding, PlanTick
from streams.core.planning.order import all_sources
from streams.core.planning.planner import Planner
from streams.core.policy import Policy
from streams.planner_shell import PlannerShell
from streams.testing import START_TS
from tests.streams import factories as f

DAY = 86_400_000


def retiring(policy: Policy, after: int) -> Policy:
    return policy.model_copy(update={"planner": policy.planner.model_copy(update={"retire_after": after})})


def shell(policy: Policy) -> PlannerShell:
    return PlannerShell(
        Planner(policy),
        {},
        size=lambda d: 20,
        sources=all_sources(1, 1),
        partitions=1,
        stage_of={"errors": "errors", "summaries": "cluster"},
        ordered=False,
    )


def found(s: PlannerShell, fleet: FleetState, day: float, fid: str) -> list[Action]:
    finding = f.finding("h1", ts=START_TS + int(day * DAY), action="reboot" if day else "rma", fid=fid)
    return s.decide(fleet, PlanFinding("d0", finding.to_record()), 0)


def tick(s: PlannerShell, fleet: FleetState, day: float) -> list[Action]:
    return s.decide(fleet, PlanTick("d0", START_TS + int(day * DAY)), 0)


def two_failed_repairs(s: PlannerShell, fleet: FleetState) -> list[Action]:
    """h1: an RMA, back; flagged again 10 d later (escalated), back; the log so far."""
    log = found(s, fleet, 0, "f-first") + tick(s, fleet, 5)
    log += found(s, fleet, 15, "f-again") + tick(s, fleet, 21)
    assert [a.kind for a in log].count("escalated") == 1 and log[-1].kind == "returned"
    return log


def test_the_second_failed_repair_within_the_window_retires_the_host_with_a_page(policy: Policy) -> None:
    p = retiring(policy, 2)
    s, fleet = shell(p), FleetState()
    log = two_failed_repairs(s, fleet)
    assert "retired" not in [a.kind for a in log]  # one failed repair: not yet
    third = found(s, fleet, 30, "f-third")
    kinds = [a.kind for a in third]
    assert kinds[:2] == ["suspected", "escalated"] and kinds.count("retired") == 1
    retired = next(a for a in third if a.kind == "retired")
    assert retired.host_id == "h1" and retired.caused_by == third[1].action_id
    assert "2 failed repairs within 90 d (retire_after 2)" in retired.reason
    assert fleet.hosts["h1"].status == "retired"


def test_a_restarted_worker_retires_on_the_same_escalation_with_the_same_id(policy: Policy) -> None:
    p = retiring(policy, 2)
    s, fleet = shell(p), FleetState()
    log = two_failed_repairs(s, fleet)
    before = [a for a in found(s, fleet, 30, "f-third") if a.kind == "retired"]
    restarted, folded = shell(p), replay(log)  # a new worker: its state folded from the log alone
    after = [a for a in found(restarted, folded, 30, "f-third") if a.kind == "retired"]
    assert after == before and len(after) == 1


def test_off_by_default_the_worker_retires_no_one(policy: Policy) -> None:
    assert policy.planner.retire_after == 0
    s, fleet = shell(policy), FleetState()
    two_failed_repairs(s, fleet)
    assert "retired" not in [a.kind for a in found(s, fleet, 30, "f-third")]
