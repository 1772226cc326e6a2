"""Repair times per cause and per operation kind, drawn from what was measured (issue 35, item 6).

A memory-error cause whose outages are mostly 12-minute resets has a median of minutes; an RMA
must not be done in that time, and every RMA must not take the same time either.
"""

from __future__ import annotations

from streams.core.fleet.lifecycle import FleetState, apply_logged
from streams.core.planning.planner import Planner
from streams.core.policy import Policy
from streams.testing import START_TS
from tests.streams import factories as f
from tests.streams.core.fleet.test_outages import HOUR, incident, step

MINUTE = 60_000
DOMAIN = [f"h{i}" for i in range(40)]  # capacity 10 %: 4 hosts


def members(domain: str) -> list[str]:
    return DOMAIN if domain == "d0" else []


def memory_history() -> FleetState:
    """hbm3 (dram_uce's cause): ten 12-minute resets and four long repairs."""
    state = FleetState()
    for i in range(10):
        apply_logged(
            state, incident(f"r{i}", f"x{i}", START_TS - 900 * HOUR, START_TS - 900 * HOUR + 12 * MINUTE)
        )
    for i, hours in enumerate([100, 300, 531, 700]):
        apply_logged(
            state, incident(f"l{i}", f"y{i}", START_TS - 900 * HOUR, START_TS - (900 - hours) * HOUR)
        )
    return state


def due_after(planner: Planner, state: FleetState, host: str, action: str) -> int:
    planner.on_finding(state, f.finding(host, action=action), "d0", 40)
    op = state.hosts[host].current
    assert op is not None
    return planner.repair_time_ms(state, op)


def test_an_rma_draws_from_repairs_and_a_reboot_from_resets(policy: Policy) -> None:
    state, planner = memory_history(), Planner(policy, members=members)
    assert state.outages.repair_time_ms("hbm3", 3) == 12 * MINUTE  # the old answer: the cause's median
    assert due_after(planner, state, "h1", "rma") in (100 * HOUR, 300 * HOUR, 531 * HOUR, 700 * HOUR)
    assert due_after(planner, state, "h2", "reboot") == 12 * MINUTE


def test_rmas_draw_a_distribution_the_same_for_a_seed(policy: Policy) -> None:
    def draws(seed: int) -> list[int]:
        p = policy.model_copy(
            update={"planner": policy.planner.model_copy(update={"repair_time_seed": seed})}
        )
        state, planner = memory_history(), Planner(p, members=members)
        return [due_after(planner, state, f"h{i}", "rma") for i in range(4)]

    assert len(set(draws(0))) > 1  # not one time for every RMA
    assert draws(0) == draws(0)
    assert draws(0) != draws(1)


def test_recorded_rmas_stand_for_an_rma_before_other_repairs(policy: Policy) -> None:
    state = memory_history()
    for i in range(3):
        apply_logged(state, step(f"z{i}", "rma_shipped", START_TS - 800 * HOUR, ticket=f"R{i}", cause="hbm3"))
        apply_logged(state, step(f"z{i}", "rma_replaced", START_TS - 680 * HOUR, ticket=f"R{i}"))
    assert due_after(Planner(policy, members=members), state, "h1", "rma") == 120 * HOUR
