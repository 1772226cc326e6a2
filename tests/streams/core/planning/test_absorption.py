"""A finding on a host with an open repair joins it: no second RMA, no repeat-after-repair page."""

from __future__ import annotations

from streams.alerts import alerts_for
from streams.core.actions import Action
from streams.core.findings import Finding
from streams.core.fleet.lifecycle import FleetState, replay
from streams.core.planning.absorption import covers
from streams.core.planning.planner import Planner
from streams.core.policy import Policy
from streams.testing import START_TS
from tests.streams import factories as f

HOUR = 3_600_000
DAY = 24 * HOUR


def kinds(actions: list[Action]) -> list[str]:
    return [a.kind for a in actions]


def pages(actions: list[Action]) -> list[str]:
    return [x["payload"]["alertname"] for a in actions for x in alerts_for(a) if "payload" in x]


def slow(ts: int, fid: str) -> Finding:
    return f.finding("h1", ts=ts, action="diagnostics", fid=fid, rule="slow_host")


def test_a_finding_during_an_open_rma_is_absorbed_and_only_a_finding_after_its_return_repeats(
    policy: Policy,
) -> None:
    planner, state = Planner(policy), FleetState()
    log = planner.on_finding(state, slow(START_TS, "f1"), "d0", 20)  # diagnostics, 4 h
    log += planner.reconcile(state, "d0", 20, START_TS + DAY)
    assert kinds(log)[-1] == "returned"
    again = planner.on_finding(state, slow(START_TS + 2 * DAY, "f2"), "d0", 20)
    assert "escalated" in kinds(again) and "rma_opened" in kinds(again)  # the diagnostics did not hold
    log += again
    during = planner.on_finding(state, slow(START_TS + 3 * DAY, "f3"), "d0", 20)  # the RMA is open (5 d)
    assert kinds(during) == ["absorbed"] and pages(during) == []
    assert "already in rma for f2" in during[0].reason
    log += during
    back = planner.reconcile(state, "d0", 20, START_TS + 30 * DAY)
    assert kinds(back) == ["repaired", "verified", "returned"]  # one RMA, nothing handed over
    log += back
    host = state.hosts["h1"]
    assert host.current is None and host.waiting == [] and host.escalated == [START_TS + 2 * DAY]
    after = slow(START_TS + 31 * DAY, "f4")
    assert Planner(policy).on_finding(replay(log), after, "d0", 20)[1].kind == "escalated"  # rebuilt too
    assert "RepeatAfterRepair" in pages(planner.on_finding(state, after, "d0", 20))


def test_a_queued_repair_absorbs_weaker_work_and_a_stronger_ask_still_queues(policy: Policy) -> None:
    planner, state = Planner(policy), FleetState()
    planner.on_finding(state, f.finding("h1", action="nic_replacement"), "d0", 20)
    reboot = planner.on_finding(state, f.finding("h1", ts=START_TS + 1, action="reboot"), "d0", 20)
    assert kinds(reboot) == ["absorbed"]
    cable = planner.on_finding(state, f.finding("h1", ts=START_TS + 2, action="cable_replacement"), "d0", 20)
    assert kinds(cable) == ["suspected"]  # another part: waits for the NIC, no escalation
    assert covers("rma", "cable_replacement") and not covers("diagnostics", "rma")
    assert not covers("change", "reboot")
