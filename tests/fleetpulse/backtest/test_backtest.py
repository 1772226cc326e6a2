"""Backtests over a hand-built lake: one threshold changed, exact findings appear and disappear."""

from __future__ import annotations

from pathlib import Path

import pytest

from analytics.lake import Lake
from fleetpulse.backtest.events import History, Period, read_history
from fleetpulse.backtest.replay import Replay
from fleetpulse.backtest.run import run_backtest, sweep_table
from fleetpulse.backtest.sweep import parse_setting, read_policy_data, variants
from ground.settings.detect import PlanOrder
from streams.core.policy import load_policy
from tests.fleetpulse.backtest import lake as hand
from tests.streams import factories as f


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    return read_history(Lake(hand.build(tmp_path_factory.mktemp("lake"))))


def found(history: History, *sets: str) -> dict[str, set[str]]:
    """Finding ids per status for the packaged policy with ``sets`` applied (one variant)."""
    [variant] = variants(read_policy_data(None), [parse_setting(s) for s in sets])
    [result] = run_backtest(history, [variant])
    out: dict[str, set[str]] = {}
    for status, fid in result.findings.select("status", "finding_id").iter_rows():
        out.setdefault(status, set()).add(fid)
    return out


def test_the_packaged_policy_raises_what_the_live_run_raised(history: History) -> None:
    assert found(history) == {"both": {hand.dram_finding_id("h01"), hand.slow_finding_id("h03")}}


def test_a_longer_window_makes_the_slower_repeat_appear(history: History) -> None:
    assert found(history, "rules.dram_uce_repeat_gpu.window=14d") == {
        "both": {hand.dram_finding_id("h01"), hand.slow_finding_id("h03")},
        "backtest only": {hand.dram_finding_id("h02")},
    }


def test_a_lower_slowdown_catches_the_milder_straggler(history: History) -> None:
    assert found(history, "slow_host.min_slowdown=0.01") == {
        "both": {hand.dram_finding_id("h01"), hand.slow_finding_id("h03")},
        "backtest only": {hand.slow_finding_id("h04")},
    }


def test_a_higher_slowdown_loses_the_straggler_the_live_run_found(history: History) -> None:
    assert found(history, "slow_host.min_slowdown=0.04") == {
        "both": {hand.dram_finding_id("h01")},
        "live only": {hand.slow_finding_id("h03")},
    }


def test_a_higher_count_loses_the_repeat(history: History) -> None:
    assert found(history, "rules.dram_uce_repeat_gpu.count=3") == {
        "both": {hand.slow_finding_id("h03")},
        "live only": {hand.dram_finding_id("h01")},
    }


def test_a_sweep_is_a_grid_of_variants_in_order(history: History) -> None:
    grid = variants(
        read_policy_data(None),
        [
            parse_setting("slow_host.min_slowdown=0.01,0.02,0.04"),
            parse_setting("rules.dram_uce_repeat_gpu.count=2,3"),
        ],
    )
    table = sweep_table(run_backtest(history, grid))
    assert table.select("slow_host.min_slowdown", "rules.dram_uce_repeat_gpu.count", "findings").rows() == [
        ("0.01", "2", 3),
        ("0.01", "3", 2),
        ("0.02", "2", 2),
        ("0.02", "3", 1),
        ("0.04", "2", 1),
        ("0.04", "3", 0),
    ]
    # more findings, more hosts drained for diagnostics or RMA
    drained = dict(zip(table["findings"], table["drained_host_days"], strict=False))
    assert drained[3] > drained[2] > drained[1] > drained[0] == 0


def test_the_period_bounds_what_is_replayed(tmp_path: Path) -> None:
    lake = Lake(hand.build(tmp_path))
    before_second_uce = read_history(lake, Period(None, hand.START + 3 * 86_400_000))
    assert {r["event_id"] for r in before_second_uce.events if r["event_type"] == "EccErrorObserved"} == {
        "uce-h01-0",
        "uce-h02-0",
    }
    assert [r["payload"]["finding_id"] for r in before_second_uce.live_findings] == [
        hand.slow_finding_id("h03")
    ]
    assert len(before_second_uce.inventory) == len(hand.HOSTS)  # inventory is read whatever the period


def test_replay_order_is_event_time_then_event_id(history: History) -> None:
    keys = [(r["ts"], r["event_id"]) for r in history.events]
    assert keys == sorted(keys)
    assert len(set(keys)) == len(keys)


def test_an_incident_counts_against_the_domain_buffers(tmp_path: Path, history: History) -> None:
    """h00 is out for an incident when h03's finding comes: md0 (5 hosts, failure buffer 1) halts instead of draining."""
    [variant] = variants(read_policy_data(None), [])
    [without] = run_backtest(history, [variant])
    assert [a.kind for a in without.replay.actions if a.host_id == "h03"][:2] == [
        "suspected",
        "drain_requested",
    ]

    back = hand.START + 86_400_000
    with_incident = read_history(Lake(hand.build(tmp_path, extra=[hand.incident("h00", hand.START, back)])))
    [result] = run_backtest(with_incident, [variant])
    md0 = [a for a in result.replay.actions if a.domain == "md0"]
    assert [(a.kind, a.host_id) for a in md0][:3] == [
        ("suspected", "h03"),
        ("train_halted", "-"),
        ("deferred", "h03"),
    ]
    assert "1 out for incidents" in md0[1].reason
    assert result.capacity.outage_host_days == pytest.approx(1.0)
    assert result.capacity.trains_halted == 1


@pytest.mark.parametrize(("order", "first"), [("event_time", "h01"), ("arrival", "h02")])
def test_the_replay_decides_findings_in_the_live_planners_order(order: PlanOrder, first: str) -> None:
    """md0 (5 hosts) drains one host at a time: the earlier finding takes the slot, or the first to come."""
    run = Replay(load_policy(), hand.inventory(), plan_order=order)
    run._plan(f.finding("h02", ts=hand.START + 20))  # closed later, found first (a slow-host window)
    run._plan(f.finding("h01", ts=hand.START + 10))
    result = run.finish(hand.START)
    assert [a.host_id for a in result.actions if a.kind == "drain_requested"] == [first]
