"""Every preset has hosts in jobs of 1-3 hosts, and the big ones spares that never run a job."""

from __future__ import annotations

import numpy as np
import pytest

from producers.config import available_presets, load_fleet_config
from producers.fleet import DAY_MS, build_fleet
from producers.jobs import job_timeline
from producers.samples import SampleModel, TickEffects
from tests.producers.conftest import START


@pytest.mark.parametrize("preset", available_presets())
def test_every_preset_runs_small_jobs(preset: str) -> None:
    fleet = build_fleet(load_fleet_config(preset), 7, START, START + DAY_MS)
    sizes = np.bincount(fleet.job, minlength=len(fleet.job_ids))
    small = (sizes <= 3) & ~fleet.job_spare
    assert sizes[small].sum() >= 0.05 * fleet.n_hosts  # at least 5 % of the hosts in jobs of 1-3 hosts
    assert (sizes[small] == 1).any() and (sizes[small] == 2).any()
    assert np.all(np.diff(fleet.job) >= 0)  # slots laid out along the hosts (truth's jobs table relies on it)


@pytest.mark.parametrize("preset", ["demo", "meta-48k", "many-small"])
def test_spares_are_in_service_and_never_run_a_job(preset: str) -> None:
    fleet = build_fleet(load_fleet_config(preset), 7, START, START + 3 * DAY_MS)
    spares = np.flatnonzero(fleet.job_spare[fleet.job])
    assert 0.01 * fleet.n_hosts <= len(spares) <= 0.06 * fleet.n_hosts
    jobs = job_timeline(fleet)
    assert not np.isin(jobs.slot, np.flatnonzero(fleet.job_spare)).any()
    model, hosts, g = SampleModel(fleet, jobs), np.arange(fleet.n_hosts), fleet.config.gpus_per_host
    for tick, t in enumerate((START + 3_600_000, START + 2 * DAY_MS)):
        zeros = TickEffects.zeros(fleet.n_hosts, g)
        cols = model.columns(t, 60, hosts, zeros, np.zeros((fleet.n_hosts, g), np.int64), tick)
        assert np.isnan(cols["step_time_ms"][spares]).all() and (cols["job"][spares] == -1).all()
        assert (cols["job"][~fleet.job_spare[fleet.job]] >= 0).mean() > 0.5


def test_small_and_spare_shares_are_checked() -> None:
    cfg = load_fleet_config("demo")
    with pytest.raises(ValueError, match="small_share"):
        cfg.jobs.model_validate({**cfg.jobs.model_dump(), "small_share": 0.7, "spare_share": 0.5})
