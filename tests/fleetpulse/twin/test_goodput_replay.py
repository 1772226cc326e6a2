"""One job accounting: replaying a twin run's own history through ``goodput.replay`` gives its figures.

The live closed loop has no ``JobBook`` running beside it and replays its history afterwards; this pins
that a history replayed in event-time order reaches the very ledger the twin reached while running.
"""

from __future__ import annotations

from typing import Any

from fleetpulse.backtest.sweep import read_policy_data
from fleetpulse.twin import goodput, run_twin, twin_settings
from fleetpulse.twin.jobs import job_book
from fleetpulse.twin.outcome import summary
from fleetpulse.twin.pacing import INTERRUPT, LEAVE, SLOW
from streams.core.policy import parse_policy
from tests.fleetpulse.twin.conftest import START_TS

LEMONS = {"fraction": 0.1, "kinds": {"dram_uce": 1.0}, "onset_window": 0.2}
SLOW_HOSTS = {
    "fraction": 0.05,
    "factor": [0.2, 0.3],
    "slow_at_start": 0.5,
    "intermittent_fraction": 0.0,
    "causes": {"thermal_throttling": 1.0},
}


def test_the_replay_of_a_twin_run_gives_its_own_ettr_goodput_and_losses(make_fleet_config: Any) -> None:
    config = make_fleet_config(hosts=48, job_hosts=4, rate_per_gpu_day=2e-3, lemons=LEMONS, slow=SLOW_HOSTS)
    data = read_policy_data(None)
    data["planner"] |= {"retire_after": 2, "retire_within": "90d"}
    settings = twin_settings({"spare_pct": 5, "sample_interval_min": 60, "cure": {"rma": {}}})
    run = run_twin(config, parse_policy(data), settings, seed=3, start_ts=START_TS, days=30)
    kinds = {s.kind for s in run.history}
    assert {INTERRUPT, LEAVE, SLOW} <= kinds, kinds  # failures, drains and slow hosts all in play
    twin = summary(run)
    assert twin["lost_gpu_h"]["failures"] > 0 and twin["lost_gpu_h"]["slow_hosts"] > 0

    f = run.fleet
    book = job_book(f, settings, [int(f.install_ts[h]) <= START_TS for h in range(f.n_hosts)])
    end_ts = START_TS + round(run.horizon_h * goodput.HOUR_MS)
    stopped = goodput.replay(f, book, run.slowdown, START_TS, end_ts, reversed(run.history))
    per_host = f.config.gpus_per_host
    lost = goodput.total_losses(book, {k: h * per_host for k, h in run.out_h.items()})
    replayed = goodput.figures(book.jobs, lost, goodput.available_gpu_h(f, START_TS, end_ts))

    assert stopped == twin["interruptions"]
    assert replayed == {k: twin[k] for k in replayed}


def test_without_spares_every_gpu_hour_is_useful_or_lost_to_one_cause(make_fleet_config: Any) -> None:
    """A job waiting for a drained host: its held GPUs wait, the drained host's count as drains (once)."""
    config = make_fleet_config(hosts=48, job_hosts=4, rate_per_gpu_day=2e-3, lemons=LEMONS)
    settings = twin_settings({"cure": {"rma": {}}})
    run = run_twin(config, parse_policy(read_policy_data(None)), settings, seed=3, start_ts=START_TS, days=30)
    s = summary(run)
    assert s["lost_gpu_h"]["waiting"] > 0 and s["lost_gpu_h"]["drains"] > 0
    lost = sum(s["lost_gpu_h"].values())
    assert abs(s["available_gpu_h"] - s["useful_gpu_h"] - lost) < 0.01
