"""HostSampled columns: healthy noise is small, slow hosts show their cause, tables match records."""

import dataclasses

import numpy as np
import pytest

from producers.avro_columns import NULL_INT
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


def _to_job_median(cols, values: np.ndarray, peers: np.ndarray) -> np.ndarray:
    """``values`` over the median of ``peers`` in the same job (NaN for idle hosts or a job without peers)."""
    out = np.full(len(values), np.nan)
    for job in np.unique(cols["job"][cols["job"] >= 0]):
        mine = cols["job"] == job
        if (mine & peers).sum() >= 2:
            out[mine] = values[mine] / np.median(values[mine & peers])
    return out


def test_healthy_step_time_noise_is_about_one_percent_around_the_job(build) -> None:
    fleet = build_fleet(load_fleet_config("meta-48k"), 7, START, START + DAY_MS)
    cols = _columns(fleet, START + DAY_MS)
    healthy = fleet.slow_factor == 0
    rel = _to_job_median(cols, cols["step_time_ms"], healthy)[healthy]
    assert 0.007 < np.nanstd(rel) < 0.013
    raw = cols["step_time_ms"][healthy & (cols["job"] >= 0)]
    assert np.std(raw) / np.median(raw) > 0.1  # jobs run at their own paces: the cluster is no reference


def test_jobs_start_and_stop_and_idle_hosts_report_no_job(build) -> None:
    fleet = build_fleet(load_fleet_config("demo"), 7, START, START + 30 * DAY_MS)
    seen: set[int] = set()
    idle = 0
    for day in range(30):
        cols = _columns(fleet, START + day * DAY_MS + 3600_000)
        seen |= set(cols["job"].tolist())
        off = cols["job"] < 0
        idle += int(off.sum())
        # an idle host has no step time: NaN in the column, null in the event
        assert np.isnan(cols["step_time_ms"][off]).all() and (cols["step_time_ms"][~off] > 0).all()
    assert len(seen - {-1}) > 2 * len(fleet.job_ids)  # slots ran several jobs each
    assert 0 < idle < 0.2 * 30 * fleet.n_hosts


def test_slow_hosts_are_slower_by_their_factor_with_their_cause_symptoms(build) -> None:
    cfg = config_with("demo", slow={"fraction": 0.3, "slow_at_start": 1.0, "intermittent_fraction": 0.0})
    fleet = build_fleet(cfg, 7, START, START + DAY_MS)
    t = START + 3600_000
    cols = _columns(fleet, t)
    slow = (fleet.slow_factor > 0) & (fleet.slow_onset_ts <= t)
    later = (fleet.slow_factor > 0) & ~slow  # installed during the run: not slow yet
    ratio = _to_job_median(cols, cols["step_time_ms"], ~slow)
    assert np.nanmax(np.abs(ratio[later] - 1)) < 0.05
    assert np.isfinite(ratio[slow]).sum() > 30
    assert np.nanmax(np.abs(ratio[slow] - (1 + fleet.slow_factor[slow]))) < 0.05
    cause = np.array([c or "" for c in fleet.slow_cause])
    cause[~slow] = ""
    thermal = cause == "thermal_throttling"
    assert cols["temp_c"][thermal].mean() > cols["temp_c"][~slow].mean() + 10
    assert (cols["sm_clock_mhz"][thermal] < 1980).all() and (cols["sm_clock_mhz"][~slow] == 1980).all()
    pcie = np.flatnonzero(cause == "pcie_downtraining")
    assert (cols["pcie_link_gen"][pcie, fleet.slow_unit[pcie]] == 4).all()
    assert (cols["pcie_link_width"][pcie, fleet.slow_unit[pcie]] == 8).all()
    assert (cols["pcie_link_gen"][~slow] == 5).all()
    # downtraining shows against the maximum; thermal throttling in the HW thermal slowdown bit
    assert (cols["pcie_link_gen_max"] == 5).all() and (cols["pcie_link_width_max"] == 16).all()
    hw_thermal = (cols["throttle_reasons"] & 0x40) != 0
    assert hw_thermal[thermal].all() and not hw_thermal[~slow].any()
    nic = np.flatnonzero(cause == "degraded_nic")
    assert (cols["symbol_errors"][nic, fleet.slow_unit[nic]] > 10 * 10).all()  # > 10/s over 10 s
    assert np.median(cols["symbol_errors"][~slow]) < 5


def test_intermittent_slow_hosts_are_slow_in_about_duty_of_episodes(build) -> None:
    cfg = config_with("demo", slow={"fraction": 0.3, "slow_at_start": 1.0, "intermittent_fraction": 1.0})
    fleet = build_fleet(cfg, 7, START, START + DAY_MS)
    model = SampleModel(fleet)
    hosts = np.flatnonzero(fleet.slow_factor > 0)
    episode = 30 * 60_000
    ends = START + episode * np.arange(1, 1001)
    share = np.array([model.slow_share(int(t), 10, hosts) for t in ends])
    assert set(np.unique(share)) == {0.0, 1.0}
    assert np.abs(share.mean(axis=0) - fleet.slow_duty[hosts]).max() < 0.1
    # an episode lasts: every 10 s sample within one agrees, and a continuation sees the same ones
    within = np.array([model.slow_share(int(ends[5] - k * 10_000), 10, hosts) for k in range(180)])
    settled = fleet.slow_onset_ts[hosts] <= ends[4]  # slow before the episode began
    assert settled.sum() > 50 and (within[:, settled] == within[0, settled]).all()
    later = SampleModel(dataclasses.replace(fleet, segment=1))
    assert (later.slow_share(int(ends[7]), 10, hosts) == share[7]).all()
    # a window of many episodes averages them
    assert 0 < model.slow_share(START + DAY_MS, 21600, hosts).mean() < 1


def test_sample_table_equals_the_generic_to_table(build) -> None:
    from producers.generator import FleetAgents

    built = build("small", days=1)
    agents = FleetAgents(built.fleet, built.faults, built.noise, run_id="r", interval_s=3600)
    batch = next(b for t in agents.ticks() for b in t.batches if isinstance(b, SampleBatch))
    assert sample_table(batch).equals(to_table("HostSampled", batch.records()))
    batch.columns["step_time_ms"][0] = np.nan  # v2 nulls: no step time, a GPU field not reported
    batch.columns["throttle_reasons"][1, 0] = NULL_INT
    table = sample_table(batch)
    assert table.equals(to_table("HostSampled", batch.records()))
    assert table.column("step_time_ms")[0].as_py() is None
    assert table.column("gpus")[1].as_py()[0]["throttle_reasons"] is None
    part = batch.take(np.array([3, 1]))
    assert [r["host_id"] for r in part.records()] == [
        batch.records()[3]["host_id"],
        batch.records()[1]["host_id"],
    ]


@pytest.mark.parametrize("interval_s", [10, 21600])
def test_longer_windows_average_sample_noise_away(build, interval_s: int) -> None:
    fleet = build_fleet(load_fleet_config("meta-48k"), 7, START, START + DAY_MS)
    cols = _columns(fleet, START + DAY_MS, interval_s)
    healthy = fleet.slow_factor == 0
    rel_sd = np.nanstd(_to_job_median(cols, cols["step_time_ms"], healthy)[healthy])
    assert rel_sd < (0.013 if interval_s == 10 else 0.005)


def test_the_truth_lists_when_each_slow_host_was_slow(build) -> None:
    from producers.truth import episodes_table

    cfg = config_with("demo", slow={"fraction": 0.2, "intermittent_fraction": 0.5})
    fleet = build_fleet(cfg, 7, START, START + DAY_MS)
    spans = episodes_table(fleet).to_pylist()
    model = SampleModel(fleet)
    slow = np.flatnonzero(fleet.slow_factor > 0)
    index = {fleet.host_id[h]: h for h in slow}
    assert {r["host_id"] for r in spans} <= set(index) and len(spans) > len(slow)
    for t in START + np.arange(1, 288) * 300_000:  # every 5 minutes: the sample ending then
        share = model.slow_share(int(t), 10, slow)
        listed = {r["host_id"] for r in spans if r["start_ts"] < t <= r["end_ts"]}
        assert {fleet.host_id[h] for h, x in zip(slow, share, strict=True) if x > 0} == listed
