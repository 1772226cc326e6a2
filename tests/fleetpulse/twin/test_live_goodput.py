"""The live loop's goodput from its history, without a broker: moves, deferrals and sent faults replayed."""

from __future__ import annotations

import dataclasses

from fleetpulse.twin.live_goodput import live_goodput
from fleetpulse.twin.response import FleetResponse
from fleetpulse.twin.settings import twin_settings
from producers.fleet import Fleet, build_fleet
from producers.schedule import Schedule
from tests.fleetpulse.twin.conftest import START_TS, fleet_config
from tests.fleetpulse.twin.test_response import act

DAY = 86_400_000
END = START_TS + 10 * DAY


def history(fleet: Fleet) -> tuple[FleetResponse, Schedule]:
    """Host 0 drained and repaired from day 2 to day 4; host 5's repair deferred from day 5; faults on day 6."""
    r = FleetResponse(fleet, twin_settings(), seed=3)
    r.apply(
        [
            act(fleet, 0, "drain_requested", START_TS + 2 * DAY),
            act(fleet, 0, "rma_opened", START_TS + 2 * DAY),
            act(fleet, 0, "returned", START_TS + 4 * DAY),
            act(fleet, 5, "deferred", START_TS + 5 * DAY),
        ]
    )
    sent = Schedule.from_columns(
        {
            "ts": [START_TS + 6 * DAY, START_TS + 6 * DAY + 1, START_TS + 7 * DAY],
            "host": [1, 5, 2],
            "gpu": [0, 0, -1],
            "port": [-1, -1, 0],
            "kind": ["dram_uce", "dram_uce", "link_flap"],  # a single link flap stops no job
            "cause": ["GPU", "GPU", "Network"],
            "phase": ["random", "random", "random"],
            "aux1": [1, 1, 0],
            "aux2": [0, 0, 0],
        }
    )
    return r, sent


def test_the_live_history_gives_each_slot_its_ettr_and_every_gpu_hour_a_cause() -> None:
    config = fleet_config(hosts=8, job_hosts=4, rate_per_gpu_day=1e-6)
    fleet = build_fleet(config, 3, START_TS, END)
    gpus = config.gpus_per_host
    r, sent = history(fleet)
    jobs = live_goodput(fleet, r.settings, r, [0.0] * fleet.n_hosts, sent, END)
    assert sorted(jobs["ettr_by_job"]) == sorted(set(fleet.job_ids)) == ["c-job000", "c-job001"]
    assert jobs["interruptions"] == 2
    lost = jobs["lost_gpu_h"]
    assert lost["failures"] > 0 and lost["deferrals"] > 0  # host 5's fault came while its repair waited
    assert lost["repairs"] == 48.0 * gpus  # host 0 out two days
    assert lost["waiting"] == 48.0 * 3 * gpus  # its three job mates waited (no spare)
    assert jobs["available_gpu_h"] == 8 * gpus * 240.0
    assert abs(jobs["available_gpu_h"] - jobs["useful_gpu_h"] - sum(lost.values())) < 0.01
    assert jobs["ettr_by_job"]["c-job000"] < jobs["ettr_by_job"]["c-job001"]


def test_a_continued_segment_counts_only_its_own_time() -> None:
    config = fleet_config(hosts=8, job_hosts=4, rate_per_gpu_day=1e-6)
    fleet = build_fleet(config, 3, START_TS, END)
    later = dataclasses.replace(fleet, start_ts=START_TS + 3 * DAY, segment=1)
    r, sent = history(later)
    jobs = live_goodput(later, r.settings, r, [0.0] * fleet.n_hosts, sent, END)
    gpus = config.gpus_per_host
    assert jobs["available_gpu_h"] == 8 * gpus * 168.0
    assert jobs["lost_gpu_h"]["repairs"] == 24.0 * gpus  # day 3 to day 4 only
    assert jobs["lost_gpu_h"]["waiting"] == 24.0 * 3 * gpus  # host 0's job mates, from the segment's start
    assert jobs["lost_gpu_h"]["drains"] == 0  # the drain was before: nothing owed for it here
    assert abs(jobs["available_gpu_h"] - jobs["useful_gpu_h"] - sum(jobs["lost_gpu_h"].values())) < 0.01


def test_a_slot_whose_hosts_arrive_later_runs_its_job_from_then() -> None:
    config = fleet_config(hosts=16, job_hosts=4, rate_per_gpu_day=1e-6)
    config = config.model_copy(
        update={
            "install": config.install.model_copy(update={"arriving_fraction": 0.5, "cohorts_per_cluster": 4})
        }
    )
    fleet = build_fleet(config, 3, START_TS, END)
    assert (fleet.install_ts > START_TS).any() and (fleet.install_ts <= START_TS).any()
    r = FleetResponse(fleet, twin_settings(), seed=3)
    jobs = live_goodput(fleet, r.settings, r, [0.0] * fleet.n_hosts, Schedule.empty(), END)
    assert sorted(jobs["ettr_by_job"]) == sorted(set(fleet.job_ids))  # every slot runs, the late ones too
    # idle: only a host installed before the last of its slot's hosts, until then
    begins = {
        s: max(max(int(fleet.install_ts[h]), START_TS) for h in range(16) if fleet.job[h] == s)
        for s in set(fleet.job.tolist())
    }
    waited = sum(begins[int(fleet.job[h])] - max(int(fleet.install_ts[h]), START_TS) for h in range(16))
    assert waited > 0
    assert abs(jobs["idle_gpu_h"] - waited / DAY * 24 * config.gpus_per_host) < 0.01
