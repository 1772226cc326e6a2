"""The lockstep's cadence: the fleet waits for the pipeline and answers before every Nth tick only."""

from __future__ import annotations

from fleetpulse.twin.live import Lockstep


def test_the_fleet_answers_before_every_tick_by_default() -> None:
    assert all(Lockstep().due(tick) for tick in range(1, 9))


def test_answering_every_fourth_tick_makes_a_quarter_of_the_round_trips() -> None:
    lockstep = Lockstep(every=4)
    assert [tick for tick in range(1, 13) if lockstep.due(tick)] == [4, 8, 12]
