"""Operators' steps on ``fleet.actions`` (``fleetpulse ops record``): the fleet honours them, folded without a broker."""

from __future__ import annotations

from typing import Any

from fleetpulse.twin.response import FleetResponse
from fleetpulse.twin.settings import twin_settings
from streams.operator_events import operator_record, parse_step
from tests.fleetpulse.twin.conftest import START_TS
from tests.fleetpulse.twin.test_response import DAY, act, lemon_fleet

NOW = 1_900_000_000_000  # the clock the steps are checked against (they lie in its past)


def day(d: float) -> int:
    return START_TS + int(d * DAY)


def step(host: str, kind: str, ts: int, ticket: str | None = None) -> dict[str, Any]:
    """The record ``fleetpulse ops record`` writes."""
    parsed = parse_step({"host_id": host, "kind": kind, "actor": "ops", "ts": ts, "ticket_id": ticket}, NOW)
    return operator_record(parsed, cluster="c", now_ms=NOW)


def test_a_host_an_operator_took_out_sends_no_fault_until_the_operator_returns_it() -> None:
    fleet = lemon_fleet()
    host = fleet.host_id[0]
    r = FleetResponse(fleet, twin_settings(), seed=3)
    log = [step(host, "out_of_service", day(10)), step(host, "returned_to_service", day(14))]
    r.apply_logged(log, until=day(12))  # the return is recorded ahead: the fleet takes it at its time
    assert not r.faults_off(0, day(9), lemon=False) and r.faults_off(0, day(11), lemon=False)
    r.apply_logged(log, until=day(13))  # read again: counts once
    assert r.faults_off(0, day(13), lemon=False)
    r.apply_logged([], until=day(15))
    assert not r.faults_off(0, day(15), lemon=False)
    report = r.report()
    assert report["gpu_h_out_of_service"] == {"operators": 96.0 * fleet.config.gpus_per_host}
    assert report["held_by_operators_at_end"] == [] and report["actions_read"] == 2


def test_the_planner_s_return_does_not_end_an_operator_s_hold() -> None:
    fleet = lemon_fleet()
    host = fleet.host_id[1]
    r = FleetResponse(fleet, twin_settings(), seed=3)
    r.apply_logged([step(host, "rma_shipped", day(2), "T1")], until=day(2))
    r.apply([act(fleet, 1, "drain_requested", day(3)), act(fleet, 1, "returned", day(5))])
    assert r.faults_off(1, day(6), lemon=False)  # the RMA the operator shipped is not back
    r.apply_logged([step(host, "rma_replaced", day(7), "T1")], until=day(8))
    assert not r.faults_off(1, day(8), lemon=False)
    gpus = fleet.config.gpus_per_host
    assert r.report()["gpu_h_out_of_service"] == {"drains": 48.0 * gpus, "operators": 72.0 * gpus}


def test_an_operator_s_return_does_not_end_the_planner_s_repair() -> None:
    fleet = lemon_fleet()
    host = fleet.host_id[2]
    r = FleetResponse(fleet, twin_settings(), seed=3)
    r.apply([act(fleet, 2, "drain_requested", day(1))])
    r.apply_logged(
        [step(host, "out_of_service", day(2)), step(host, "returned_to_service", day(3))], until=day(4)
    )
    assert r.faults_off(2, day(4), lemon=False)  # still drained by the planner
    assert r.report()["held_by_operators_at_end"] == []
