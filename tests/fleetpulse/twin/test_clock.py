"""The job clock's accounting: every wall hour lands in one bucket, interruptions lose the work since the last save."""

from __future__ import annotations

import math

import pytest

from fleetpulse.twin.clock import JobClock, JobSpec, advance, close, interrupt, stop_gracefully

SPEC = JobSpec(gpus=8, length_h=math.inf, interval_h=1.0, save_h=0.1, restart_h=0.5)


def test_whole_cycles_are_work_then_save() -> None:
    clock, spent = advance(SPEC, JobClock(), 11.0)  # ten cycles of 1.1 h
    assert clock.saved == pytest.approx(10.0)
    assert spent.useful == pytest.approx(10.0)
    assert spent.save == pytest.approx(1.0)
    assert spent.wall == pytest.approx(11.0)


def test_an_interruption_loses_the_work_since_the_last_save_and_owes_a_restart() -> None:
    clock, _ = advance(SPEC, JobClock(), 1.1 + 0.4)  # one save, then 0.4 h of work in flight
    clock, lost = interrupt(SPEC, clock)
    assert lost.failed == pytest.approx(0.4)
    assert clock.saved == pytest.approx(1.0)
    clock, spent = advance(SPEC, clock, 0.7)
    assert spent.restart == pytest.approx(0.5)
    assert clock.since == pytest.approx(0.2)


def test_an_interruption_during_a_save_loses_the_whole_interval() -> None:
    clock, _ = advance(SPEC, JobClock(), 1.05)  # half-way through the first save
    assert clock.save_left == pytest.approx(0.05)
    _, lost = interrupt(SPEC, clock)
    assert lost.failed == pytest.approx(1.0)


def test_a_slow_job_keeps_less_work_and_the_rest_is_the_slow_hosts_loss() -> None:
    clock, spent = advance(
        SPEC, JobClock(), 2.2, rate=1 / 1.1
    )  # one cycle: 1.1 h of work + 0.1 h save, then 1 h
    spent = spent.plus(close(clock))
    assert spent.useful == pytest.approx(2.1 / 1.1)
    assert spent.slow == pytest.approx(2.1 - 2.1 / 1.1)
    assert spent.wall == pytest.approx(2.2)


def test_a_drain_keeps_the_work_and_costs_only_the_restart() -> None:
    clock, _ = advance(SPEC, JobClock(), 0.6)
    clock, kept = stop_gracefully(SPEC, clock)
    assert kept.useful == pytest.approx(0.6)
    assert clock.saved == pytest.approx(0.6)
    assert clock.restart_left == pytest.approx(0.5)


def test_a_job_of_finite_length_stops_when_its_work_is_done() -> None:
    spec = JobSpec(gpus=8, length_h=3.0, interval_h=1.0, save_h=0.1, restart_h=0.5)
    clock, spent = advance(spec, JobClock(), 10.0)
    assert clock.finished
    assert clock.saved == pytest.approx(3.0)
    assert spent.wall == pytest.approx(3.2)  # two saves, none after the last piece of work


@pytest.mark.parametrize("steps", [[5.0], [0.3, 0.3, 4.4], [1.05, 0.05, 3.9], [0.01] * 500])
def test_the_buckets_add_up_to_the_wall_time_however_time_is_cut(steps: list[float]) -> None:
    clock, total = JobClock(), None
    for dt in steps:
        clock, spent = advance(SPEC, clock, dt, rate=0.9)
        total = spent if total is None else total.plus(spent)
    assert total is not None
    total = total.plus(close(clock))
    assert total.wall == pytest.approx(sum(steps))
    ref, _ = advance(SPEC, JobClock(), sum(steps), rate=0.9)
    assert clock.saved == pytest.approx(ref.saved)
