"""A cluster's scored windows reach the campaigns' step-time test as one action per campaign and window."""

from __future__ import annotations

import math

from schemas import Codec
from streams.core.actions import Action
from streams.core.fleet.lifecycle import FleetState, apply, apply_logged
from streams.core.peers.scores import Verdict
from streams.trains.step_forward import StepForward
from tests.streams.trains.test_error_days import T0, campaign, inventory

W = 5 * 60_000
HOSTS = {f"h{i}": "md0" if i < 4 else "md1" for i in range(8)}


def verdicts(start: int, step: dict[str, float]) -> list[Verdict]:
    median = sorted(step.values())[len(step) // 2]
    return [
        Verdict(h, start, start + W, 0.0, 0.0, False, s, median, "peers", 0.0)
        for h, s in sorted(step.items())
    ]


def visit(state: FleetState, cid: str, host: str, kinds: list[str]) -> None:
    for kind in kinds:
        apply(
            state,
            Action(f"{host}-{kind}", kind, host, "c0", HOSTS[host], "change", T0, finding_id=cid, rule="550"),
        )


def through_the_log(state: FleetState, actions: list[Action]) -> None:
    for action in actions:
        apply_logged(state, Codec().decode(Codec().encode(action.to_record())).record)


def test_the_upgraded_hosts_are_compared_with_those_not_asked_yet_and_the_fold_keeps_the_window() -> None:
    state, forward = FleetState(), StepForward(inventory(HOSTS).domain_of)
    cid = campaign(state)
    for host in ("h0", "h1"):  # on the new version since T0
        visit(state, cid, host, ["suspected", "change_requested", "change_applied"])
    visit(state, cid, "h2", ["suspected", "change_requested"])  # mid-change: in neither side
    step = {h: 1000.0 for h in HOSTS} | {"h0": 1050.0, "h1": 1050.0, "h2": 1050.0}
    out = forward.observe(state, "c0", verdicts(T0 + W, step))
    assert [a.kind for a in out] == ["steps_counted"] and out[0].finding_id == cid
    through_the_log(state, out + out)  # a window scored again adds nothing
    [w] = state.trains.campaigns[cid].steps
    assert (w.ts, w.upgraded, w.control) == (T0 + W, 2, 5)
    assert math.isclose(w.diff, math.log(1.05)) and w.se > 0


def test_nothing_is_forwarded_without_a_comparing_campaign_or_two_hosts_a_side() -> None:
    state, forward = FleetState(), StepForward(inventory(HOSTS).domain_of)
    step = {h: 1000.0 for h in HOSTS}
    assert forward.observe(state, "c0", verdicts(T0 + W, step)) == []  # no campaign
    cid = campaign(state)
    visit(state, cid, "h0", ["suspected", "change_requested", "change_applied"])
    assert forward.observe(state, "c0", verdicts(T0 + W, step)) == []  # one host upgraded
    visit(state, cid, "h1", ["suspected", "change_requested", "change_applied"])
    alone = [Verdict(h, T0 + W, T0 + 2 * W, 0.0, 0.0, False, 1000.0, 0.0, "telemetry", 0.0) for h in HOSTS]
    assert forward.observe(state, "c0", alone) == []  # alone in their jobs: no job median
    assert len(forward.observe(state, "c0", verdicts(T0 + W, step))) == 1
