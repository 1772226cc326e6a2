"""The planner counts every host that is out, whatever took it out, and repairs take measured times."""

from __future__ import annotations

from streams.core.fleet.lifecycle import FleetState, apply_logged
from streams.core.planning.planner import Planner
from streams.core.policy import Policy
from streams.testing import START_TS
from tests.streams import factories as f
from tests.streams.core.fleet.test_outages import HOUR, incident, step

DOMAIN = [f"h{i}" for i in range(16)]  # failure buffer 25 %: 4 hosts; capacity 10 %: 1 host


def members(domain: str) -> list[str]:
    return DOMAIN if domain == "d0" else []


def state_with_incidents(hosts: list[str], end: int | None = None) -> FleetState:
    state = FleetState()
    for h in hosts:
        apply_logged(state, incident(f"i-{h}", h, START_TS - HOUR, end))
    return state


def test_imported_outages_past_the_failure_buffer_halt_the_train(policy: Policy) -> None:
    state = state_with_incidents(DOMAIN[1:5])  # 4 out: at the buffer
    planner = Planner(policy, members=members)
    b = planner.budgets(state, "d0", 16, START_TS)
    assert (b.out, b.failing, b.out_elsewhere, b.failure_budget) == (4, 4, 4, 4)
    actions = planner.on_finding(state, f.finding("h9"), "d0", 16)
    assert [a.kind for a in actions] == ["suspected", "train_halted", "deferred"]
    assert "4 out for incidents or operators' steps" in actions[1].reason


def test_without_the_inventory_the_same_outages_are_invisible(policy: Policy) -> None:
    """What the planner did before: hosts it had no action for were counted as healthy."""
    state = state_with_incidents(DOMAIN[1:5])
    actions = Planner(policy).on_finding(state, f.finding("h9"), "d0", 16)
    assert [a.kind for a in actions] == ["suspected", "drain_requested", "drained", "rma_opened"]


def test_outages_that_ended_count_no_more_and_the_train_resumes(policy: Policy) -> None:
    state = state_with_incidents(DOMAIN[1:6], end=START_TS + 2 * HOUR)
    planner = Planner(policy, members=members)
    halted = planner.on_finding(state, f.finding("h9"), "d0", 16)
    assert "train_halted" in [a.kind for a in halted]
    # the worker's tick asks again once the outages have ended in event time, not before
    assert planner.work_signature(state, "d0", 16, START_TS + 2 * HOUR - 1) is None
    assert planner.work_signature(state, "d0", 16, START_TS + 2 * HOUR) is not None
    later = planner.reconcile(state, "d0", 16, START_TS + 2 * HOUR)
    assert [a.kind for a in later][:1] == ["train_resumed"]
    assert "rma_opened" in [a.kind for a in later]


def test_a_host_out_by_an_operator_fills_the_capacity_buffer(policy: Policy) -> None:
    state = FleetState()
    apply_logged(state, step("h3", "out_of_service", START_TS - HOUR))
    planner = Planner(policy, members=members)
    deferred = planner.on_finding(state, f.finding("h9", action="reboot"), "d0", 16)
    assert [a.kind for a in deferred] == ["suspected", "deferred"]
    apply_logged(state, step("h3", "returned_to_service", START_TS + HOUR))
    resumed = planner.reconcile(state, "d0", 16, START_TS + HOUR)
    assert [a.kind for a in resumed] == ["released", "drain_requested", "drained", "reboot_requested"]


def test_repairs_take_a_time_measured_for_their_cause(policy: Policy) -> None:
    state = FleetState()
    for i, hours in enumerate([10, 30, 20]):  # hbm3, the cause of dram_uce_repeat_gpu
        apply_logged(
            state, incident(f"m{i}", f"x{i}", START_TS - 100 * HOUR, START_TS - (100 - hours) * HOUR)
        )
    planner = Planner(policy, members=members)
    planner.on_finding(state, f.finding("h1"), "d0", 16)  # an RMA: the policy says 5 days
    due = planner.next_due(state, "d0")
    assert due is not None and due - START_TS in (10 * HOUR, 20 * HOUR, 30 * HOUR)  # drawn, not the median
    assert planner.reconcile(state, "d0", 16, due - 1) == []
    assert [a.kind for a in planner.reconcile(state, "d0", 16, due)][-1] == "returned"


def test_too_few_measurements_or_none_wanted_fall_back_to_the_policy(policy: Policy) -> None:
    state = FleetState()
    for i in range(2):
        apply_logged(state, incident(f"m{i}", f"x{i}", START_TS - 10 * HOUR, START_TS - 9 * HOUR))
    planner = Planner(policy, members=members)
    planner.on_finding(state, f.finding("h1"), "d0", 16)
    assert planner.next_due(state, "d0") == START_TS + policy.repair_time_ms("rma")
    apply_logged(state, incident("m3", "x3", START_TS - 10 * HOUR, START_TS - 9 * HOUR))
    assert planner.next_due(state, "d0") == START_TS + HOUR
    off = policy.model_copy(
        update={"planner": policy.planner.model_copy(update={"measured_repair_times": False})}
    )
    assert Planner(off, members=members).next_due(state, "d0") == START_TS + policy.repair_time_ms("rma")
