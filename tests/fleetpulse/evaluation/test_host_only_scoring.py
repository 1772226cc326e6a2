"""Lemons on hosts whose records name only the host are found by the host-level rules and scored so."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from analytics.lake import Lake
from fleetpulse.backtest.events import Period, read_history
from fleetpulse.backtest.run import run_backtest
from fleetpulse.backtest.sweep import read_policy_data, variants
from fleetpulse.evaluation.sources import load_truth
from ground.settings import Settings
from producers import SimulationRequest, run_simulation
from tests.producers.conftest import config_with

pytestmark = pytest.mark.slow


def test_host_only_lemons_are_found_by_the_host_level_rules(tmp_path: Path) -> None:
    fleet = config_with("small", lemons={"fraction": 0.25}, failures={"host_only_fraction": 0.5})
    lake, truth = tmp_path / "lake", tmp_path / "truth"
    run_simulation(
        Settings.load(),
        SimulationRequest(fleet=fleet, days=30, seed=3, sink="parquet", out=lake, truth_out=truth),
    )
    hosts = pl.read_parquet(truth / "hosts.parquet")
    only_lemons = hosts.filter(pl.col("host_only") & pl.col("lemon_kind").is_not_null())["host_id"].to_list()
    assert only_lemons, "the seed must put lemons on hosts that name only the host"
    [result] = run_backtest(
        read_history(Lake(lake), Period()), variants(read_policy_data(None), []), load_truth(truth)
    )
    assert result.score is not None
    lemons = result.score.detectors["repeat_offender"]
    found = {f.host_id: f.rule for f in result.replay.findings if f.detector == "repeat_offender"}
    assert all(found.get(h, "").endswith("_host_unknown") for h in only_lemons if h in found)
    assert set(only_lemons) & set(lemons.tp_hosts), "host-only lemons are found"
    assert lemons.fp == 0 and lemons.fn == 0, (lemons.fp_hosts, lemons.fn_hosts)
