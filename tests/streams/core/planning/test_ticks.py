"""Arrival-order ticks move a domain only when its work changed since its last move."""

from __future__ import annotations

from streams.core.fleet.lifecycle import FleetState, apply_logged
from streams.core.fleet.outages import change_times
from streams.core.planning.planner import Planner
from streams.core.planning.ticks import TickSchedule
from streams.core.policy import Policy
from streams.testing import START_TS
from tests.streams import factories as f
from tests.streams.core.fleet.test_outages import HOUR, incident


def in_repair(planner: Planner) -> tuple[FleetState, int]:
    """Domain d0 with h1 in repair (due at the returned time) and h2 waiting behind it."""
    state = FleetState()
    for host in ("h1", "h2"):
        planner.on_finding(state, f.finding(host, ts=START_TS), "d0", 10)
    due = planner.next_due(state, "d0")
    assert due is not None
    return state, due


def test_a_domain_is_moved_once_per_change_of_its_work(policy: Policy) -> None:
    planner = Planner(policy)
    state, due = in_repair(planner)
    moved: list[str] = []
    ticks = TickSchedule(planner, lambda domain: 10)
    ticks.tick(state, due - 1, moved.append)
    assert moved == []  # nothing due yet
    ticks.tick(state, due, moved.append)
    ticks.tick(state, due + 1, moved.append)
    assert moved == ["d0"]  # not reconciled: the same work, not moved again


def test_skipping_unchanged_ticks_still_moves_a_domain_once_its_repair_is_due(policy: Policy) -> None:
    planner = Planner(policy)
    state, due = in_repair(planner)
    moved: list[str] = []

    def reconcile(domain: str) -> None:
        moved.extend(f"{a.kind} {a.host_id}" for a in planner.reconcile(state, domain, 10, due))

    ticks = TickSchedule(planner, lambda domain: 10, skip_unchanged=True)
    ticks.tick(state, due - 1, reconcile)
    ticks.tick(state, due, reconcile)
    assert moved[:3] == ["repaired h1", "verified h1", "returned h1"]  # and h2 takes the slot
    assert "drain_requested h2" in moved


def test_a_skipped_tick_still_wakes_when_an_imported_outage_ends(policy: Policy) -> None:
    """Two hosts out for incidents until ``end`` halt d0 at the finding; their return (no record of its own)
    must resume the train though the fleet state's count has not changed since."""
    hosts = [f"h{i}" for i in range(10)]
    planner = Planner(policy, members=lambda domain: hosts)
    state = FleetState()
    end = START_TS + 6 * HOUR
    incidents = [incident(f"i{n}", host, START_TS - HOUR, end) for n, host in enumerate(("h8", "h9"))]
    for record in incidents:
        apply_logged(state, record)
    assert "train_halted" in [
        a.kind for a in planner.on_finding(state, f.finding("h1", ts=START_TS), "d0", 10)
    ]

    def moves(wakes: list[int]) -> list[str]:
        moved: list[str] = []
        ticks = TickSchedule(planner, lambda domain: 10, skip_unchanged=True)
        ticks.wake_at(wakes)
        for now in (START_TS + HOUR, end - 1, end, end + HOUR):
            ticks.tick(state, now, moved.append)
        return moved

    assert moves(list(change_times(incidents))) == ["d0"]  # moved once the hosts were back
    assert moves([]) == []  # what the replay did without the wakes: the halted train never resumed
