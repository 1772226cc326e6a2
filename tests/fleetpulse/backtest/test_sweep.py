"""``--set`` parsing and the grid of policy variants it makes."""

from __future__ import annotations

import pytest

from fleetpulse.backtest.errors import BacktestError
from fleetpulse.backtest.sweep import Setting, parse_setting, read_policy_data, variants


def test_values_are_toml_else_text() -> None:
    assert parse_setting("slow_host.min_slowdown=0.01, 0.02") == Setting(
        "slow_host.min_slowdown", (0.01, 0.02)
    )
    assert parse_setting("slow_host.window=5m,10m").values == ("5m", "10m")
    assert parse_setting("noise_xids=[13, 31],[13]").values == ([13, 31], [13])
    assert parse_setting("planner.auto_resume=false").values == (False,)


def test_a_grid_sets_each_key_in_its_own_place() -> None:
    grid = variants(
        read_policy_data(None),
        [
            parse_setting("rules.dram_uce_repeat_gpu.count=2,3"),
            parse_setting("planner.capacity_buffer_pct=5,20"),
        ],
    )
    seen = [
        (
            next(r.count for r in v.policy.rules if r.name == "dram_uce_repeat_gpu"),
            v.policy.planner.capacity_buffer_pct,
        )
        for v in grid
    ]
    assert seen == [(2, 5.0), (2, 20.0), (3, 5.0), (3, 20.0)]
    assert grid[1].label == "rules.dram_uce_repeat_gpu.count=2, planner.capacity_buffer_pct=20"
    other = next(r for r in grid[3].policy.rules if r.name == "dram_uce_repeat_host")
    assert other.count == 3  # untouched


def test_a_list_entry_by_index_and_a_repeated_key() -> None:
    [v] = variants(read_policy_data(None), [parse_setting("rules.0.count=4")])
    assert v.policy.rules[0].count == 4
    with pytest.raises(BacktestError, match="twice"):
        variants(read_policy_data(None), [parse_setting("k=1"), parse_setting("k=2")])


def test_no_setting_is_the_policy_as_given() -> None:
    [v] = variants(read_policy_data(None), [])
    assert v.label == "policy as given" and v.values == ()
