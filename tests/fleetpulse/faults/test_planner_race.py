"""The planner bug the fault scenarios run into, reproduced without Kafka (pure ``Planner`` calls).

A second finding for a host whose first operation (same kind) is due to complete *before*
the finding in event time is absorbed into that operation if no tick completed it yet, and
opens a second RMA if a tick did. Ticks come from a wall-clock timer in the worker, so two
runs of the same input can decide differently (the fault suite's "actions lost vs reference").
"""

from __future__ import annotations

from streams.core.findings import Finding
from streams.core.fleet.lifecycle import FleetState
from streams.core.planning.planner import Planner
from streams.core.policy import load_policy

DAY_MS = 86_400_000


def finding(n: int, ts: int) -> Finding:
    return Finding(
        finding_id=f"fnd-{n}",
        detector="repeat_offender",
        rule="dram_uce_repeat_gpu",
        scope="gpu",
        scope_key="h1/0",
        host_id="h1",
        cluster="c0",
        ts=ts,
        error_class="dram_uce",
        count=2,
        window_start=ts - DAY_MS,
        window_end=ts,
        recommended_action="rma",
    )


def decide(tick_between: bool) -> list[tuple[str, str | None]]:
    policy = load_policy(None)
    planner, state = Planner(policy), FleetState()
    second = policy.repair_time_ms("rma") + DAY_MS  # a day after the first repair is due
    out = planner.on_finding(state, finding(1, 0), "c0-md0", 6)
    if tick_between:  # the worker's timer happened to fire between the two findings
        out += planner.reconcile(state, "c0-md0", 6, second - 1)
    out += planner.on_finding(state, finding(2, second), "c0-md0", 6)
    return [(a.kind, a.finding_id) for a in out]


def test_second_finding_opens_a_second_rma_when_a_tick_completed_the_first() -> None:
    assert ("rma_opened", "fnd-2") in decide(tick_between=True)


def test_decision_does_not_depend_on_whether_a_tick_came_in_between() -> None:
    assert decide(tick_between=False) == decide(tick_between=True)
