"""A step-time window moves the planner's ticks only when it halts its campaign, and then at once."""

from __future__ import annotations

import math

from streams.core.actions import Action
from streams.core.fleet.lifecycle import FleetState, apply
from streams.core.planning.planner import Planner
from streams.core.planning.ticks import TickSchedule
from streams.core.policy import load_policy
from streams.trains.step_forward import steps_action
from streams.trains.step_time import StepSettings, StepTest, StepWindow
from tests.streams.trains.test_error_days import T0, campaign, inventory

W = 5 * 60_000
HOUR = 3_600_000
HOSTS = {f"h{i}": "md0" if i < 4 else "md1" for i in range(8)}


def window(state: FleetState, cid: str, i: int, diff: float, se: float) -> Action:
    """A window of step times as the cluster stage forwards it (``streams.trains.step_forward``)."""
    w = StepWindow(T0 + HOUR + i * W, 2, 6, diff, se)
    return steps_action(state.trains.campaigns[cid], "c0", w.ts, w)


def test_a_step_time_halt_is_decided_at_the_tick_after_the_window_that_crosses_the_bound() -> None:
    policy = load_policy()
    inv = inventory(HOSTS)
    state = FleetState()
    cid = campaign(state)
    planner = Planner(policy, members=inv.hosts_in, view=inv)
    ticks = TickSchedule(planner, inv.domain_size)
    moved: list[str] = []
    halts: list[Action] = []

    def at(now: int) -> None:
        moved.clear()

        def move(domain: str) -> None:
            moved.append(domain)
            for action in planner.reconcile(state, domain, inv.domain_size(domain), now):
                apply(state, action)
                halts.extend([action] if action.kind == "campaign_halted" else [])

        ticks.tick(state, now, move)

    at(T0 + HOUR)  # the campaign starts: its canaries are asked for the change
    assert moved and not halts
    for _ in range(5):  # a move changes the state its signature was taken on: ticks until nothing is left
        at(T0 + HOUR)
        if not moved:
            break
    assert moved == [] and not halts
    t = policy.trains
    expected = StepTest(StepSettings(t.step_slowdown, t.alpha, t.beta))
    camp = state.trains.campaigns[cid]
    crossed = None
    for i in range(1, 40):
        now = T0 + HOUR + i * W
        # 4 % slower, noisy: several windows to halt
        apply(state, window(state, cid, i, math.log(1.04), 0.05))
        expected.feed(camp.steps)
        verdict = expected.verdict()
        assert verdict is not None
        at(now)
        if verdict.state != "halt":
            assert moved == [] and not halts, f"window {i}: no halt yet, and no domain to move for it"
            continue
        crossed = i
        break
    assert crossed is not None and crossed > 2, "the test needs a halt a few windows in"
    # the window that crosses the bound halts the campaign at the very next tick, in the first domain
    assert camp.status == "halted" and halts, f"window {crossed} crossed the bound: the next tick halts"
    assert moved[0] == "md0"
    [halt] = halts
    assert (halt.ts, halt.domain, halt.finding_id) == (T0 + HOUR + crossed * W, "md0", cid)
    reason = halt.reason or ""
    assert reason.startswith("step time: +4.0 % on the new version") and f"over {crossed} windows" in reason


def test_a_repair_falling_due_moves_its_domain_while_a_campaign_is_open() -> None:
    """No step window moves the domains any more: a repair's due time must, campaign or not."""
    policy = load_policy()
    inv = inventory(HOSTS)
    state = FleetState()
    campaign(state, scope=["md0"])
    for kind in ("suspected", "drain_requested", "drained", "reboot_requested"):
        apply(state, Action(f"h5-{kind}", kind, "h5", "c0", "md1", "reboot", T0, finding_id="f-1"))
    planner = Planner(policy, members=inv.hosts_in, view=inv)
    ticks = TickSchedule(planner, inv.domain_size)
    due = planner.next_due(state, "md1")
    assert due is not None and due > T0 + W

    def at(now: int) -> list[str]:
        moved: list[str] = []

        def move(domain: str) -> None:
            moved.append(domain)
            for action in planner.reconcile(state, domain, inv.domain_size(domain), now):
                apply(state, action)

        ticks.tick(state, now, move)
        return moved

    for now in range(T0, due, W):  # settled before it is due
        at(now)
    assert state.hosts["h5"].current is not None and at(due - 1) == []
    assert "md1" in at(due)
    assert state.hosts["h5"].current is None and state.hosts["h5"].returned_from == "reboot"
