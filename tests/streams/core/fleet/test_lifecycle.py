"""Host lifecycle: a pure, idempotent fold over actions; replay rebuilds the same state."""

from __future__ import annotations

import copy
import json
import typing

from analytics.quality.suites import suite_path
from streams.core.actions import Action, ActionKind
from streams.core.fleet.lifecycle import FleetState, apply, fold, replay
from streams.core.planning.planner import Planner
from streams.core.policy import Policy
from streams.testing import START_TS
from tests.streams import factories as f

HOUR = 3_600_000


def planned(policy: Policy) -> tuple[FleetState, list[Action]]:
    """A realistic action history: two findings in one domain, one deferred, one repaired."""
    planner = Planner(policy)
    state = FleetState()
    actions: list[Action] = []
    actions += planner.on_finding(state, f.finding("h1", ts=START_TS, action="reboot"), "d0", 8)
    actions += planner.on_finding(state, f.finding("h2", ts=START_TS + 1, action="rma"), "d0", 8)
    actions += planner.reconcile(state, "d0", 8, START_TS + 2 * HOUR)
    return state, actions


def test_fold_is_pure(policy: Policy) -> None:
    _, actions = planned(policy)
    before = FleetState()
    snapshot = copy.deepcopy(before)
    after = fold(before, actions[0])
    assert before == snapshot and after != before
    assert after.hosts["h1"].status == "suspected"


def test_replay_rebuilds_the_planner_state(policy: Policy) -> None:
    state, actions = planned(policy)
    assert replay(actions) == state
    assert [(a.host_id, a.kind) for a in actions] == [
        ("h1", "suspected"),
        ("h1", "drain_requested"),
        ("h1", "drained"),
        ("h1", "reboot_requested"),
        ("h2", "suspected"),
        ("h2", "deferred"),
        ("h1", "repaired"),
        ("h1", "verified"),
        ("h1", "returned"),
        ("h2", "released"),
        ("h2", "drain_requested"),
        ("h2", "drained"),
        ("h2", "rma_opened"),
    ]


def test_applying_twice_changes_nothing(policy: Policy) -> None:
    _, actions = planned(policy)
    once = replay(actions)
    twice = replay(actions + actions)
    assert once == twice and twice.count == len(actions)


def test_actions_round_trip_through_records(policy: Policy) -> None:
    _, actions = planned(policy)
    assert [Action.from_record(a.to_record()) for a in actions] == actions
    rebuilt = FleetState()
    for a in actions:
        apply(rebuilt, Action.from_record(a.to_record()))
    assert rebuilt == replay(actions)


def test_host_states_after_repair(policy: Policy) -> None:
    state, _ = planned(policy)
    assert state.hosts["h1"].status == "in_service" and state.hosts["h1"].completed == 1
    assert state.hosts["h2"].status == "in_repair"


def test_the_lake_gate_accepts_every_action_kind_the_planner_can_write() -> None:
    suite = json.loads(suite_path("maintenance_action_recorded").read_text())
    [kind_set] = [
        e["kwargs"]["value_set"]
        for e in suite["expectations"]
        if e["type"] == "expect_column_values_to_be_in_set" and e["kwargs"]["column"] == "kind"
    ]
    assert set(kind_set) == set(typing.get_args(ActionKind))
