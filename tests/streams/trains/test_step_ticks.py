"""A step-time window moves the planner's ticks only when it halts its campaign, and then at once; what
used to ride on the windows' ticks (a repair falling due, the gate's soak) moves its domain by itself."""

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


class Worker:
    """A planner ticked as the live worker ticks it (``TickSchedule``), each move reconciled at once."""

    def __init__(self, state: FleetState) -> None:
        self.state, self.inv = state, inventory(HOSTS)
        self.policy = load_policy()
        self.planner = Planner(self.policy, members=self.inv.hosts_in, view=self.inv)
        self.ticks = TickSchedule(self.planner, self.inv.domain_size)
        self.actions: list[Action] = []

    def at(self, now: int) -> list[str]:
        """The domains the tick at ``now`` moved."""
        moved: list[str] = []

        def move(domain: str) -> None:
            moved.append(domain)
            for action in self.planner.reconcile(self.state, domain, self.inv.domain_size(domain), now):
                apply(self.state, action)
                self.actions.append(action)

        self.ticks.tick(self.state, now, move)
        return moved

    def settle(self, now: int) -> None:
        """Ticks until no domain moves (a move changes the state its signature was taken on)."""
        for _ in range(10):
            if not self.at(now):
                return
        raise AssertionError("the ticks do not settle")

    def kinds(self, kind: str) -> list[Action]:
        return [a for a in self.actions if a.kind == kind]


def window(state: FleetState, cid: str, i: int, diff: float, se: float) -> Action:
    """A window of step times as the cluster stage forwards it (``streams.trains.step_forward``)."""
    w = StepWindow(T0 + HOUR + i * W, 2, 6, diff, se)
    return steps_action(state.trains.campaigns[cid], "c0", w.ts, w)


def test_a_step_time_halt_is_decided_at_the_tick_after_the_window_that_crosses_the_bound() -> None:
    state = FleetState()
    cid = campaign(state)
    worker = Worker(state)
    worker.settle(T0 + HOUR)  # the campaign starts: its first host is asked for the change
    assert state.trains.campaigns[cid].visits and not worker.kinds("campaign_halted")
    t = worker.policy.trains
    expected = StepTest(StepSettings(t.step_slowdown, t.alpha, t.beta))
    camp = state.trains.campaigns[cid]
    crossed = None
    for i in range(1, 40):
        # 4 % slower, noisy: several windows to halt
        apply(state, window(state, cid, i, math.log(1.04), 0.05))
        expected.feed(camp.steps)
        verdict = expected.verdict()
        assert verdict is not None
        moved = worker.at(T0 + HOUR + i * W)
        if verdict.state != "halt":
            assert moved == [] and camp.status == "running", f"window {i}: no halt yet, no domain to move"
            continue
        crossed = i
        break
    assert crossed is not None and crossed > 2, "the test needs a halt a few windows in"
    # the window that crosses the bound halts the campaign at the very next tick, in the first domain
    assert camp.status == "halted", f"window {crossed} crossed the bound: the next tick halts"
    assert moved[0] == "md0"
    [halt] = worker.kinds("campaign_halted")
    assert (halt.ts, halt.domain, halt.finding_id) == (T0 + HOUR + crossed * W, "md0", cid)
    reason = halt.reason or ""
    assert reason.startswith("step time: +4.0 % on the new version") and f"over {crossed} windows" in reason


def test_a_repair_falling_due_moves_its_domain_while_a_campaign_is_open() -> None:
    """No step window moves the domains any more: a repair's due time must, campaign or not."""
    state = FleetState()
    campaign(state, scope=["md0"])
    for kind in ("suspected", "drain_requested", "drained", "reboot_requested"):
        apply(state, Action(f"h5-{kind}", kind, "h5", "c0", "md1", "reboot", T0, finding_id="f-1"))
    worker = Worker(state)
    due = worker.planner.next_due(state, "md1")
    assert due is not None and due > T0 + W
    for now in range(T0, due, W):  # settled before it is due
        worker.at(now)
    assert state.hosts["h5"].current is not None and worker.at(due - 1) == []
    assert "md1" in worker.at(due)
    assert state.hosts["h5"].current is None and state.hosts["h5"].returned_from == "reboot"


def test_the_gate_opens_at_the_first_tick_after_its_soak_with_no_other_change() -> None:
    state = FleetState()
    cid = campaign(state)
    worker = Worker(state)
    camp = state.trains.campaigns[cid]
    worker.settle(T0 + HOUR)
    [host] = [h for h, v in camp.visits.items() if v.requested_ts is not None]  # the gate: one host of 8
    state.trains.apply_versions({"host_id": host, "ts": T0 + HOUR, "payload": {"driver": camp.version}})
    worker.settle(T0 + HOUR)  # applied
    verified = T0 + HOUR + worker.policy.trains.burn_in
    worker.settle(verified)  # burn-in passed: verified and returned
    assert camp.tallies().verified == 1 and not camp.accepted
    opens = verified + worker.policy.trains.gate_soak
    for now in range(verified + HOUR, opens, HOUR):
        assert worker.at(now) == [], "nothing changes while the gate soaks"
    assert worker.at(opens) and camp.accepted
    [opened] = worker.kinds("gate_opened")
    assert opened.ts == opens and "no fault class worse after 7.0 d at the gate" in (opened.reason or "")
