"""The planner moves at every capacity change, not only when a finding arrives (issue 35, item 1).

An incident's end, an operator's step, a repair completing: each may free room for deferred work or
push a domain past its failure buffer, and the planner acts at that event time.
"""

from __future__ import annotations

from streams.core.actions import Action
from streams.core.fleet.lifecycle import FleetState, apply_logged
from streams.core.planning.order import Mark, OrderedPlan
from streams.core.planning.planner import Planner
from streams.core.policy import Policy
from streams.testing import START_TS
from tests.streams import factories as f
from tests.streams.core.fleet.test_outages import HOUR, incident, step

DOMAIN = [f"h{i}" for i in range(16)]  # capacity 10 %: 1 host; failure buffer 25 %: 4 hosts
SOURCES = ("errors/0", "cluster/0")


def members(domain: str) -> list[str]:
    return DOMAIN if domain == "d0" else []


def ordered(policy: Policy) -> OrderedPlan:
    return OrderedPlan(Planner(policy, members=members), frozenset(SOURCES), {}, size=lambda domain: 16)


def kinds_at(actions: list[Action], host: str) -> list[tuple[str, int]]:
    return [(a.kind, a.ts - START_TS) for a in actions if a.host_id == host]


def test_deferred_work_starts_when_an_incident_ends_not_when_the_next_finding_comes(policy: Policy) -> None:
    state = FleetState()
    apply_logged(
        state, incident("i-h3", "h3", START_TS - HOUR, START_TS + 5 * HOUR)
    )  # fills the 1-host buffer
    plan = ordered(policy)
    plan.finding(state, f.finding("h9", ts=START_TS), "d0")
    out = plan.progress(
        state, [("errors/0", Mark(START_TS + 100 * HOUR)), ("cluster/0", Mark(None, idle=True))]
    )
    steps = kinds_at(out, "h9")
    assert ("deferred", 0) in steps
    # released at the incident's end, 5 h later, not at the horizon (100 h): deferral delay after room = 0
    assert ("released", 5 * HOUR) in steps and ("rma_opened", 5 * HOUR) in steps


def test_an_operators_return_wakes_an_idle_planner_at_its_time(policy: Policy) -> None:
    state = FleetState()
    apply_logged(state, step("h3", "out_of_service", START_TS - HOUR))
    plan = ordered(policy)
    idle = [(s, Mark(START_TS, idle=True)) for s in SOURCES]
    plan.progress(state, idle)
    plan.finding(state, f.finding("h9", ts=START_TS + 10), "d0")
    deferred = plan.progress(state, [("errors/0", Mark(START_TS + 10, idle=True))])
    assert [k for k, _ in kinds_at(deferred, "h9")] == ["suspected", "deferred"]
    # no finding comes any more: the operator's "returned" alone moves the planner, at its own time
    apply_logged(state, step("h3", "returned_to_service", START_TS + 7 * HOUR))
    released = plan.progress(state, idle)
    assert ("released", 7 * HOUR) in kinds_at(released, "h9")


def test_a_host_already_out_for_its_fault_takes_no_capacity_from_its_own_operation(policy: Policy) -> None:
    state = FleetState()
    apply_logged(state, incident("i-h9", "h9", START_TS - HOUR, None))  # the flagged host itself is down
    actions = Planner(policy, members=members).on_finding(state, f.finding("h9"), "d0", 16)
    assert [a.kind for a in actions] == ["suspected", "drain_requested", "drained", "rma_opened"]


def test_another_host_out_still_fills_the_capacity_buffer(policy: Policy) -> None:
    state = FleetState()
    apply_logged(state, incident("i-h3", "h3", START_TS - HOUR, None))
    actions = Planner(policy, members=members).on_finding(state, f.finding("h9"), "d0", 16)
    assert [a.kind for a in actions] == ["suspected", "deferred"]


def test_a_domain_going_past_its_failure_buffer_halts_at_that_time_without_a_finding(policy: Policy) -> None:
    state = FleetState()
    plan = ordered(policy)
    plan.finding(state, f.finding("h1", ts=START_TS), "d0")
    plan.progress(state, [("errors/0", Mark(START_TS + HOUR)), ("cluster/0", Mark(None, idle=True))])
    for h in DOMAIN[2:6]:  # with h1 in repair: 5 failing > 4, from 10 h on
        apply_logged(state, incident(f"i-{h}", h, START_TS + 10 * HOUR, START_TS + 20 * HOUR, cause="psu"))
    out = plan.progress(state, [("errors/0", Mark(START_TS + 30 * HOUR))])
    domain = [(a.kind, a.ts - START_TS) for a in out if a.kind in ("train_halted", "train_resumed")]
    assert domain == [("train_halted", 10 * HOUR), ("train_resumed", 20 * HOUR)]


def test_a_person_resuming_a_train_over_its_buffer_is_not_overruled_until_a_new_failure(
    policy: Policy,
) -> None:
    state = FleetState()
    for h in DOMAIN[1:6]:
        apply_logged(state, incident(f"i-{h}", h, START_TS - HOUR, None))
    planner = Planner(policy, members=members)
    assert "train_halted" in [a.kind for a in planner.on_finding(state, f.finding("h9"), "d0", 16)]
    planner.resume(state, "d0", START_TS + HOUR, "by hand")
    assert [a.kind for a in planner.reconcile(state, "d0", 16, START_TS + 2 * HOUR)] == []
    apply_logged(state, incident("i-h7", "h7", START_TS + 3 * HOUR, None))
    assert planner.next_wake(state, "d0", START_TS + 2 * HOUR) == START_TS + 3 * HOUR
    assert [a.kind for a in planner.reconcile(state, "d0", 16, START_TS + 3 * HOUR)] == ["train_halted"]


DAY = 24 * HOUR


def test_a_host_rmad_returned_and_flagged_again_39_days_later_is_escalated(policy: Policy) -> None:
    """Escalation looks at the host's repair history, not only a fixed 30-day window."""
    planner, state = Planner(policy, members=members), FleetState()
    planner.on_finding(state, f.finding("h1", fid="f-first"), "d0", 16)
    assert kinds_at(planner.reconcile(state, "d0", 16, START_TS + 5 * DAY), "h1")[-1][0] == "returned"
    again = f.finding("h1", ts=START_TS + 44 * DAY, action="reboot", fid="f-again")
    actions = planner.on_finding(state, again, "d0", 16)
    assert [a.kind for a in actions][:2] == ["suspected", "escalated"]
    assert "39.0 d after returning from rma" in actions[1].reason and "repair history" in actions[1].reason
    assert {a.operation for a in actions} == {"rma"}


def test_an_operators_recorded_rma_counts_in_the_repair_history(policy: Policy) -> None:
    state = FleetState()
    apply_logged(state, step("h1", "rma_shipped", START_TS - 60 * DAY, ticket="R1"))
    apply_logged(state, step("h1", "rma_replaced", START_TS - 50 * DAY, ticket="R1"))
    actions = Planner(policy, members=members).on_finding(state, f.finding("h1", action="reboot"), "d0", 16)
    assert "escalated" in [a.kind for a in actions]
    reboot_only = FleetState()
    apply_logged(reboot_only, step("h1", "out_of_service", START_TS - 60 * DAY, ticket="S1"))
    apply_logged(reboot_only, step("h1", "returned_to_service", START_TS - 50 * DAY, ticket="S1"))
    kinds = [
        a.kind for a in Planner(policy, members=members).on_finding(reboot_only, f.finding("h1"), "d0", 16)
    ]
    assert "escalated" not in kinds


def test_a_domain_with_no_finding_halts_when_its_outages_pass_the_failure_buffer(policy: Policy) -> None:
    """The planner knows a domain from the inventory, not only from its own work."""
    state = FleetState()
    plan = OrderedPlan(
        Planner(policy, members=members),
        frozenset(SOURCES),
        {},
        size=lambda domain: 16,
        domain_of=lambda host: "d0" if host in DOMAIN else "other",
    )
    plan.progress(state, [("errors/0", Mark(START_TS)), ("cluster/0", Mark(None, idle=True))])
    for i, h in enumerate(DOMAIN[:5]):  # 5 failing > 4 from 3 h + 4 h on
        apply_logged(
            state, incident(f"i-{h}", h, START_TS + (3 + i) * HOUR, START_TS + 50 * HOUR, cause="psu")
        )
    out = plan.progress(state, [("errors/0", Mark(START_TS + 60 * HOUR))])
    assert [(a.kind, a.domain, a.ts - START_TS) for a in out] == [
        ("train_halted", "d0", 7 * HOUR),
        ("train_resumed", "d0", 50 * HOUR),
    ]


def test_a_restarted_planner_does_not_act_before_the_domains_newest_action(policy: Policy) -> None:
    """A fresh OrderedPlan over a folded state (a restart) starts from the domain's newest halt or resume."""
    state = FleetState()
    for i, h in enumerate(DOMAIN[:5]):
        apply_logged(state, incident(f"i-{h}", h, START_TS + i * HOUR, START_TS + 10 * HOUR, cause="psu"))
    planner = Planner(policy, members=members)
    planner.reconcile(state, "d0", 16, START_TS + 4 * HOUR)  # halted at 4 h
    assert state.domains["d0"].halted
    plan = OrderedPlan(planner, frozenset(SOURCES), {}, size=lambda d: 16, domain_of=lambda h: "d0")
    out = plan.progress(
        state, [("errors/0", Mark(START_TS + 20 * HOUR)), ("cluster/0", Mark(None, idle=True))]
    )
    assert [(a.kind, a.ts - START_TS) for a in out] == [("train_resumed", 10 * HOUR)]
