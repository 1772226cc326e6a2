"""A sweep's variants sharing one run of the shared stages decide what each variant's own replay decides: on a
simulated history with outages folded in, for a grid of repeat rules (one run of the sample fold and peer
comparison for all) and for a grid that also changes the slow-host policy (one run per slow-host value)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from analytics.lake import Lake
from fleetpulse.backtest.events import History, read_history
from fleetpulse.backtest.replay import ReplayResult, replay
from fleetpulse.backtest.shared import Tape, record, replays
from fleetpulse.backtest.sweep import Variant, parse_setting, read_policy_data, variants
from ground.settings.detect import PlanOrder
from tests.fleetpulse.backtest.lake import incident
from tests.fleetpulse.backtest.simulated import simulated_lake

RULES = ["rules.dram_uce_repeat_gpu.count=1,2,3", "rules.fell_off_bus_repeat_gpu.count=2,4"]
SLOW = ["slow_host.min_slowdown=0.01,0.05", "rules.dram_uce_repeat_gpu.count=1,2"]


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    """Four simulated days, with hosts taken out at times among the errors and samples (``logged``)."""
    lake = Lake(simulated_lake(tmp_path_factory.mktemp("lake"), seed=21, days=4))
    base = read_history(lake)
    hosts = sorted({r["host_id"] for r in base.inventory})
    first, last = base.events.first, base.events.last  # type: ignore[union-attr]
    assert first is not None and last is not None
    step = (last - first) // 7
    outages: list[dict[str, Any]] = [
        incident(hosts[(n * 11) % len(hosts)], first + n * step + 1, first + n * step + 7_200_000)
        for n in range(1, 7)
    ]
    return dataclasses.replace(base, outages=sorted(outages, key=lambda r: (r["ts"], r["event_id"])))


def grid(settings: list[str]) -> list[Variant]:
    return variants(read_policy_data(None), [parse_setting(s) for s in settings])


def assert_same(got: ReplayResult, want: ReplayResult, label: str) -> None:
    assert [f.to_record() for f in got.findings] == [f.to_record() for f in want.findings], label
    assert got.actions == want.actions, label
    assert (got.start_ts, got.end_ts) == (want.start_ts, want.end_ts), label
    assert (got.replayed, got.rejected, got.late) == (want.replayed, want.rejected, want.late), label
    assert got == want, label  # the fleet state too


@pytest.mark.parametrize("order", ["event_time", "arrival"])
def test_a_rules_grid_shares_one_run_and_decides_as_each_replay(history: History, order: PlanOrder) -> None:
    points = grid(RULES)
    tapes: list[Tape] = []
    got = replays(history, [v.policy for v in points], plan_order=order, on_tape=tapes.append)
    assert len(tapes) == 1 and len(got) == len(points) == 6
    assert {"slow_host", "validation"} <= set(tapes[0].reads) and "rules" not in tapes[0].reads
    want = [replay(history, v.policy, plan_order=order) for v in points]
    assert len({tuple(f.finding_id for f in w.findings) for w in want}) > 1  # the rules change something
    assert any(f.detector == "slow_host" for f in want[0].findings)
    assert all(w.actions for w in want)
    for v, g, w in zip(points, got, want, strict=True):
        assert_same(g, w, v.label)


def test_a_slow_host_grid_runs_the_shared_stages_once_per_slow_host_policy(history: History) -> None:
    points = grid(SLOW)
    tapes: list[Tape] = []
    got = replays(history, [v.policy for v in points], on_tape=tapes.append)
    assert [t.reads["slow_host"].min_slowdown for t in tapes] == [0.01, 0.05]
    want = [replay(history, v.policy) for v in points]
    slow = [{f.host_id for f in w.findings if f.detector == "slow_host"} for w in want]
    assert slow[0] == slow[1] != slow[2] == slow[3]  # the slow path differs between the two groups
    for v, g, w in zip(points, got, want, strict=True):
        assert_same(g, w, v.label)


def test_a_tape_fits_only_policies_that_agree_on_what_it_read(history: History) -> None:
    rules, slow = grid(RULES), grid(SLOW)
    tape = record(history, rules[0].policy)
    assert all(tape.fits(v.policy) for v in rules)
    assert [tape.fits(v.policy) for v in slow] == [False, False, False, False]
    limits = rules[0].policy.validation.model_copy(update={"max_temp_c": 80.0})
    assert not tape.fits(rules[0].policy.model_copy(update={"validation": limits}))
