"""Retirement reads the planner's escalations: the N-th within W retires the host, once."""

from __future__ import annotations

import tomllib

from streams.core.actions import Action
from streams.core.fleet.lifecycle import FleetState, apply
from streams.core.planning.budget import DomainBuffers
from streams.core.planning.retirement import retirements
from streams.core.policy import DEFAULT_POLICY_FILE, Policy, parse_policy

DAY = 86_400_000


def policy(after: int, within: str = "30d") -> Policy:
    data = tomllib.loads(DEFAULT_POLICY_FILE.read_text())
    data["planner"] |= {"retire_after": after, "retire_within": within}
    return parse_policy(data)


def escalated(host: str, day: float) -> Action:
    return Action(
        action_id=f"esc-{host}-{day}",
        kind="escalated",
        host_id=host,
        cluster="c",
        domain="c-md000",
        operation="rma",
        ts=int(day * DAY),
        finding_id=f"f-{day}",
        rule="dram_uce_repeat_gpu",
    )


class Retirement:
    """The escalations given folded into one fleet state, then ``retirements`` asked of them."""

    def __init__(self, policy: Policy) -> None:
        self.policy, self.state = policy, FleetState()

    def on_actions(self, actions: list[Action]) -> list[Action]:
        out: list[Action] = []
        for a in actions:
            apply(self.state, a)
            out += retirements(self.policy, self.state, [a])
        return out


def test_the_nth_failed_repair_within_the_window_retires_the_host_once() -> None:
    r = Retirement(policy(2))
    assert r.on_actions([escalated("h1", 1)]) == []
    out = r.on_actions([escalated("h1", 20)])
    assert [(a.kind, a.host_id, a.caused_by) for a in out] == [("retired", "h1", "esc-h1-20")]
    assert r.on_actions([escalated("h1", 25)]) == []  # retired already


def test_failures_further_apart_than_the_window_do_not_add_up() -> None:
    r = Retirement(policy(2, "10d"))
    assert r.on_actions([escalated("h1", 1), escalated("h1", 20), escalated("h2", 21)]) == []


def test_off_by_default() -> None:
    r = Retirement(policy(0))
    assert r.on_actions([escalated("h1", d) for d in range(10)]) == []


def test_the_same_actions_retire_the_same_hosts_with_the_same_ids() -> None:
    log = [escalated("h1", 1), escalated("h2", 2), escalated("h1", 3)]
    assert Retirement(policy(2)).on_actions(log) == Retirement(policy(2)).on_actions(log)


def test_the_planner_forgets_a_retired_host() -> None:
    """Its domain shrinks by one, it is neither out nor failing, and it stays retired after its last return."""
    p = policy(1)
    hosts = [f"h{i}" for i in range(10)]
    buffers = DomainBuffers(p, members=lambda domain: hosts)
    state = FleetState()
    esc = escalated("h1", 1)
    steps = [("suspected", 1), ("drain_requested", 1), ("drained", 1), ("rma_opened", 1)]
    for kind, day in steps:
        apply(
            state,
            Action(
                f"{kind}-h1", kind, "h1", "c", "c-md000", "rma", int(day * DAY), finding_id=esc.finding_id
            ),
        )
    before = buffers.of(state, "c-md000", 10)
    assert (before.size, before.out, before.failing) == (10, 1, 1)
    for retired in Retirement(p).on_actions([esc]):
        apply(state, retired)
    apply(
        state,
        Action("returned-h1", "returned", "h1", "c", "c-md000", "rma", 6 * DAY, finding_id=esc.finding_id),
    )
    after = buffers.of(state, "c-md000", 10)
    assert (after.size, after.out, after.failing) == (9, 0, 0)
    assert state.hosts["h1"].status == "retired"
    assert buffers.capacity(state, "c-md000", 10) == after.capacity
