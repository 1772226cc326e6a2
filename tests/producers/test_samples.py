"""HostSampled columns: healthy noise is small, slow hosts show their cause, tables match records."""

import numpy as np
import pytest

from producers.config import load_fleet_config
from producers.fleet import DAY_MS, build_fleet
from producers.sample_batch import SampleBatch, sample_table
from producers.samples import SampleModel, TickEffects
from schemas.arrow import to_table
from tests.producers.conftest import START, config_with


def _columns(fleet, t: int, interval_s: int = 10, tick: int = 1):
    model = SampleModel(fleet)
    hosts = np.arange(fleet.n_hosts)
    effects = TickEffects.zeros(fleet.n_hosts)
    remapped = np.zeros((fleet.n_hosts, 8), dtype=np.int64)
    return model.columns(t, interval_s, hosts, effects, remapped, tick)


def test_healthy_step_time_noise_is_about_one_percent(build) -> None:
    fleet = build_fleet(load_fleet_config("meta-48k"), 7, START, START + DAY_MS)
    cols = _columns(fleet, START + DAY_MS)
    healthy = (fleet.slow_factor == 0) & (fleet.cluster == 0)
    step = cols["step_time_ms"][healthy]
    rel_sd = np.std(step) / np.median(step)
    assert 0.007 < rel_sd < 0.013
    ib = (fleet.slow_factor == 0) & (fleet.cluster == 1)
    assert np.median(cols["bus_bw_gbps"][ib]) > 1.02 * np.median(cols["bus_bw_gbps"][healthy])


def test_slow_hosts_are_slower_by_their_factor_with_their_cause_symptoms(build) -> None:
    cfg = config_with("demo", slow={"fraction": 0.3, "slow_at_start": 1.0, "intermittent_fraction": 0.0})
    fleet = build_fleet(cfg, 7, START, START + DAY_MS)
    t = START + 3600_000
    cols = _columns(fleet, t)
    slow = (fleet.slow_factor > 0) & (fleet.slow_onset_ts <= t)
    later = (fleet.slow_factor > 0) & ~slow  # installed during the run: not slow yet
    assert np.abs(cols["step_time_ms"][later & (fleet.cluster == 0)] / 1000.0 - 1).max() < 0.05
    base = np.median(cols["step_time_ms"][~slow & (fleet.cluster == 0)])
    roce_slow = slow & (fleet.cluster == 0)
    ratio = cols["step_time_ms"][roce_slow] / base
    assert np.abs(ratio - (1 + fleet.slow_factor[roce_slow])).max() < 0.05
    cause = np.array([c or "" for c in fleet.slow_cause])
    cause[~slow] = ""
    thermal = cause == "thermal_throttling"
    assert cols["temp_c"][thermal].mean() > cols["temp_c"][~slow].mean() + 10
    assert (cols["sm_clock_mhz"][thermal] < 1980).all() and (cols["sm_clock_mhz"][~slow] == 1980).all()
    pcie = np.flatnonzero(cause == "pcie_downtraining")
    assert (cols["pcie_link_gen"][pcie, fleet.slow_unit[pcie]] == 4).all()
    assert (cols["pcie_link_width"][pcie, fleet.slow_unit[pcie]] == 8).all()
    assert (cols["pcie_link_gen"][~slow] == 5).all()
    nic = np.flatnonzero(cause == "degraded_nic")
    assert (cols["symbol_errors"][nic, fleet.slow_unit[nic]] > 10 * 10).all()  # > 10/s over 10 s
    assert np.median(cols["symbol_errors"][~slow]) < 5


def test_intermittent_slow_hosts_are_slow_in_about_duty_of_windows(build) -> None:
    cfg = config_with("demo", slow={"fraction": 0.3, "slow_at_start": 1.0, "intermittent_fraction": 1.0})
    fleet = build_fleet(cfg, 7, START, START + DAY_MS)
    model = SampleModel(fleet)
    hosts = np.flatnonzero(fleet.slow_factor > 0)
    rng = np.random.default_rng(0)
    active = np.mean([model.slow_active(START + DAY_MS, hosts, rng) for _ in range(400)], axis=0)
    assert np.abs(active - fleet.slow_duty[hosts]).max() < 0.1


def test_sample_table_equals_the_generic_to_table(build) -> None:
    from producers.generator import FleetAgents

    built = build("small", days=1)
    agents = FleetAgents(built.fleet, built.faults, built.noise, run_id="r", interval_s=3600)
    batch = next(b for t in agents.ticks() for b in t.batches if isinstance(b, SampleBatch))
    assert sample_table(batch).equals(to_table("HostSampled", batch.records()))
    part = batch.take(np.array([3, 1]))
    assert [r["host_id"] for r in part.records()] == [
        batch.records()[3]["host_id"],
        batch.records()[1]["host_id"],
    ]


@pytest.mark.parametrize("interval_s", [10, 21600])
def test_longer_windows_average_sample_noise_away(build, interval_s: int) -> None:
    fleet = build_fleet(load_fleet_config("meta-48k"), 7, START, START + DAY_MS)
    cols = _columns(fleet, START + DAY_MS, interval_s)
    healthy = (fleet.slow_factor == 0) & (fleet.cluster == 0)
    rel_sd = np.std(cols["step_time_ms"][healthy]) / np.median(cols["step_time_ms"][healthy])
    assert rel_sd < (0.013 if interval_s == 10 else 0.005)
