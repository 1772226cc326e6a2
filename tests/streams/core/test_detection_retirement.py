"""With ``planner.retire_after`` set, the detection core retires a host exactly as the worker's planner shell does.

Both decide through ``streams.core.planning.decide``: the core's planner messages, handed one by one to
a worker's ``PlannerShell``, give the same actions, the retirement included.
"""

from __future__ import annotations

from typing import Any

import pytest

from streams.core import detection
from streams.core.actions import Action
from streams.core.detection import DetectionCore
from streams.core.fleet.lifecycle import FleetState
from streams.core.inventory import Inventory
from streams.core.messages import PlannerMessage, PlanProgress
from streams.core.planning.order import all_sources
from streams.core.planning.planner import Planner
from streams.core.policy import Policy, load_policy
from streams.planner_shell import PlannerShell
from streams.testing import Scenario
from tests.streams import factories as f

DAY = 86_400_000


def retiring(after: int) -> Policy:
    policy = load_policy()
    return policy.model_copy(update={"planner": policy.planner.model_copy(update={"retire_after": after})})


def lemon_core(
    policy: Policy, messages: list[PlannerMessage], monkeypatch: pytest.MonkeyPatch
) -> DetectionCore:
    """A host off the bus five times in an hour, every ten days: repaired, back, and flagged again."""
    scenario = Scenario()
    inventory = Inventory()
    for record in scenario.inventory():
        inventory.apply(record)
    host, cluster = scenario.host_id(1), scenario.cluster(1)
    decide = detection.decide

    def logged(
        planner: Planner, plan: Any, fleet: FleetState, msg: PlannerMessage, size: Any
    ) -> list[Action]:
        messages.append(msg)
        return decide(planner, plan, fleet, msg, size)

    monkeypatch.setattr(detection, "decide", logged)
    core = DetectionCore(policy, inventory)
    for day in range(0, 50, 10):
        for minute in range(5):
            core.step(
                f.xid(79, host=host, cluster=cluster, ts=scenario.start_ts + day * DAY + minute * 60_000)
            )
    core.close()
    return core


def shell(policy: Policy, inventory_size: Any) -> PlannerShell:
    return PlannerShell(
        Planner(policy),
        {},
        size=inventory_size,
        sources=all_sources(1, 1),
        partitions=1,
        stage_of={"errors": "errors", "summaries": "cluster"},
        ordered=True,
    )


def test_the_core_retires_the_host_whose_repairs_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    core = lemon_core(retiring(2), [], monkeypatch)
    kinds = [a.kind for a in core.actions]
    assert kinds.count("escalated") >= 2 and kinds.count("retired") == 1
    retired = next(a for a in core.actions if a.kind == "retired")
    assert core.fleet.hosts[retired.host_id].status == "retired"
    escalations = [a for a in core.actions if a.kind == "escalated"]
    assert retired.caused_by == escalations[1].action_id


def test_off_by_default_the_core_retires_no_one(monkeypatch: pytest.MonkeyPatch) -> None:
    core = lemon_core(load_policy(), [], monkeypatch)
    kinds = [a.kind for a in core.actions]
    assert kinds.count("escalated") >= 2 and "retired" not in kinds


def test_the_worker_shell_decides_the_core_s_messages_into_the_same_actions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    policy, messages = retiring(2), list[PlannerMessage]()
    core = lemon_core(policy, messages, monkeypatch)
    worker, fleet = shell(policy, core.inventory.domain_size), FleetState()
    theirs: list[Action] = []
    for msg in messages:
        theirs += worker.decide(fleet, msg, 0)
        if isinstance(msg, PlanProgress):
            worker.settle(0)
    assert "retired" in [a.kind for a in theirs]
    assert [a.to_record() for a in theirs] == [a.to_record() for a in core.actions]
