"""The live closed loop's jobs on the real broker: its manifest carries ETTR per job and goodput.

The jobs are the simulator's job slots (the hosts table's ``job_id``); with no spares every GPU-hour
of the run is useful or lost to exactly one cause, drains and repairs included.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from fleetpulse.twin.settings import twin_settings
from tests.fleetpulse.twin.conftest import fleet_config
from tests.integration.closed_loop_run import run_closed_loop
from tests.streams.kafka_io import isolated_settings

pytestmark = pytest.mark.integration

LEMONS = {"fraction": 0.1, "kinds": {"dram_uce": 1.0}, "onset_window": 0.2, "max_repeats": 1000}


@pytest.fixture
def settings(kafka):  # type: ignore[no-untyped-def]
    return isolated_settings(kafka.settings)


def test_the_live_loop_reports_its_jobs_ettr_and_goodput(settings: Any, tmp_path: Path) -> None:
    config = fleet_config(hosts=32, job_hosts=4, rate_per_gpu_day=2e-3, lemons=LEMONS)
    result = run_closed_loop(
        settings, tmp_path, config, twin_settings({"cure": {"rma": {}}}), seed=3, days=8, interval_s=21_600
    )
    answer = result.manifest["closed_loop"]
    jobs = answer["jobs"]
    slots = set(pl.read_parquet(tmp_path / "truth" / "hosts.parquet")["job_id"].to_list())
    assert jobs["jobs"] == len(slots) == 8
    assert set(jobs["ettr_by_job"]) == slots  # the goodput's jobs are the samples' job slots
    assert all(0 < e <= 1 for e in jobs["ettr_by_job"].values())
    assert jobs["interruptions"] > 0 and jobs["lost_gpu_h"]["failures"] > 0
    assert 0 < jobs["goodput"] < 1
    out = answer["gpu_h_out_of_service"]
    assert out  # the planner took hosts out, and the jobs' losses count them
    assert all(jobs["lost_gpu_h"][c] >= v - 0.1 for c, v in out.items())  # + the restarts a drain owes
    lost = sum(jobs["lost_gpu_h"].values())
    assert abs(jobs["available_gpu_h"] - jobs["useful_gpu_h"] - lost) < 0.01
    assert jobs["available_gpu_h"] == 32 * config.gpus_per_host * 8 * 24
