"""Capacity impact from actions and outages: intervals, peaks, host-days and the per-day table."""

from __future__ import annotations

import datetime as dt

import pytest

from fleetpulse.backtest.capacity import DAY_MS, capacity_impact, drained_intervals, merged, peak
from streams.core.actions import Action
from streams.core.fleet.outages import Outages

H = 3_600_000


def act(kind: str, host: str, ts: int, domain: str = "d0") -> Action:
    return Action(f"{kind}-{host}-{ts}", kind, host, "c", domain, "rma", ts, finding_id=f"f-{host}")


def test_a_host_is_out_from_drain_to_return_and_a_hand_over_keeps_it_out() -> None:
    actions = [
        act("drain_requested", "a", 1 * H),
        act("rma_opened", "a", 1 * H),
        act("rma_opened", "a", 5 * H),  # handed over: no return in between
        act("returned", "a", 9 * H),
        act("drain_requested", "b", 2 * H),  # still out at the end
    ]
    assert drained_intervals(actions, 12 * H) == {"a": [(1 * H, 9 * H)], "b": [(2 * H, 12 * H)]}


def test_peak_counts_overlaps_and_not_touching_ends() -> None:
    assert peak({"a": [(0, 10)], "b": [(10, 20)]}) == 1
    assert peak({"a": [(0, 10)], "b": [(5, 20)], "c": [(6, 7)]}) == 3


def test_merged_counts_a_host_out_twice_over_once() -> None:
    assert merged({"a": [(0, 10)]}, {"a": [(5, 20)], "b": [(1, 2)]}) == {"a": [(0, 20)], "b": [(1, 2)]}


def test_impact_counts_drains_and_incidents_per_domain_and_day() -> None:
    outages = Outages()
    outages.apply(
        {
            "event_id": "inc-1",
            "event_type": "IncidentReported",
            "host_id": "c",
            "ts": 0,
            "payload": {"cause": "network", "start_ts": 12 * H, "end_ts": 36 * H},
        }
    )
    actions = [
        act("drain_requested", "a", 0),
        act("rma_opened", "a", 0),
        act("returned", "a", 12 * H),
        act("train_halted", "-", 1 * H),
    ]
    impact = capacity_impact(actions, outages, 0, 2 * DAY_MS, {"a": "d0", "c": "d1"}.get)  # type: ignore[arg-type]
    assert impact.drained_host_days == pytest.approx(0.5)
    assert impact.outage_host_days == pytest.approx(1.0)
    assert (impact.peak_out, impact.peak_drained, impact.peak_domain_out) == (1, 1, 1)
    assert (impact.trains_halted, impact.rmas_opened, impact.drains) == (1, 1, 1)
    day0, day1 = dt.date(1970, 1, 1), dt.date(1970, 1, 2)
    assert impact.daily.rows() == [("d0", day0, 1, 0, 1), ("d1", day0, 0, 1, 1), ("d1", day1, 0, 1, 1)]
