"""The closed loop on the real pipeline: a repaired lemon stops failing; one whose repairs fail is
found again, escalated, and retired; a drained host runs no job."""

from __future__ import annotations

from typing import Any

from fleetpulse.backtest.sweep import read_policy_data
from fleetpulse.twin import run_twin, twin_settings
from fleetpulse.twin.engine import TwinRun
from fleetpulse.twin.outcome import summary
from producers.config import FleetConfig
from streams.core.policy import load_policy, parse_policy
from tests.fleetpulse.twin.conftest import START_TS

LEMONS = {"fraction": 0.05, "kinds": {"dram_uce": 1.0}, "onset_window": 0.2}


def lemon_fleet(make_fleet_config: Any) -> FleetConfig:
    config: FleetConfig = make_fleet_config(hosts=64, job_hosts=8, rate_per_gpu_day=1e-6, lemons=LEMONS)
    return config


def lemon_hosts(run: TwinRun) -> list[str]:
    return [run.fleet.host_id[h] for h, k in enumerate(run.fleet.lemon_kind) if k is not None]


def kinds_on(run: TwinRun, host: str) -> list[str]:
    return [a.kind for a in run.actions if a.host_id == host]


def test_a_lemon_whose_rma_succeeds_stops_failing(make_fleet_config: Any) -> None:
    settings = twin_settings({"cure": {"rma": {"dram_uce": 1.0}}})
    run = run_twin(
        lemon_fleet(make_fleet_config), load_policy(None), settings, seed=3, start_ts=START_TS, days=45
    )
    lemons = lemon_hosts(run)
    assert len(lemons) == 3
    for host in lemons:
        assert kinds_on(run, host).count("rma_opened") == 1
        cured = run.lemon_cured_ts[host]
        assert all(f.ts <= cured for f in run.findings if f.host_id == host)
        assert "escalated" not in kinds_on(run, host)
    assert run.faults_masked > 0  # the cured lemons' scheduled repeats never reached the detectors


def test_a_lemon_whose_repairs_fail_is_found_again_escalated_then_retired(make_fleet_config: Any) -> None:
    data = read_policy_data(None)
    data["planner"] |= {"retire_after": 2, "retire_within": "90d"}
    policy = parse_policy(data)
    settings = twin_settings({"cure": {"rma": {}}})  # no repair ever holds
    run = run_twin(lemon_fleet(make_fleet_config), policy, settings, seed=3, start_ts=START_TS, days=60)
    for host in lemon_hosts(run):
        kinds = kinds_on(run, host)
        assert kinds.count("escalated") == 2
        assert kinds.count("retired") == 1
        assert kinds.index("escalated") < kinds.index("retired")
        retired = next(a.ts for a in run.actions if a.host_id == host and a.kind == "retired")
        assert all(f.ts <= retired for f in run.findings if f.host_id == host)  # never back, never again
    assert run.lemon_cured_ts == {}


def test_without_retirement_a_bad_lemon_keeps_coming_back(make_fleet_config: Any) -> None:
    settings = twin_settings({"cure": {"rma": {}}})
    run = run_twin(
        lemon_fleet(make_fleet_config), load_policy(None), settings, seed=3, start_ts=START_TS, days=60
    )
    for host in lemon_hosts(run):
        kinds = kinds_on(run, host)
        assert "retired" not in kinds
        assert kinds.count("rma_opened") >= 3


def test_each_return_from_a_repair_that_did_not_cure_is_a_new_incident(make_fleet_config: Any) -> None:
    """Pages per true incident as ``fleetpulse score`` counts them (``fleetpulse.evaluation.incidents``)."""
    settings = twin_settings({"cure": {"rma": {}}})
    run = run_twin(
        lemon_fleet(make_fleet_config), load_policy(None), settings, seed=3, start_ts=START_TS, days=60
    )
    for host in lemon_hosts(run):
        back = [a.ts for a in run.actions if a.host_id == host and a.kind == "returned"]
        assert 1 <= len(run.relapses[host]) <= len(back)  # every RMA failed; the last may end after the run
    s = summary(run)
    assert s["incidents"] > s["lemons_planted_found"] + s["slow_hosts_found"]
    assert s["pages_per_true_incident"] < s["pages_per_host"]


def test_a_drained_host_runs_no_job_and_reports_no_fault(make_fleet_config: Any) -> None:
    settings = twin_settings({"cure": {"rma": {}}, "repair_median_h": {"rma": 24.0 * 20}})
    run = run_twin(
        lemon_fleet(make_fleet_config), load_policy(None), settings, seed=3, start_ts=START_TS, days=45
    )
    for host in lemon_hosts(run):
        drained = next(a.ts for a in run.actions if a.host_id == host and a.kind == "drain_requested")
        back = next((a.ts for a in run.actions if a.host_id == host and a.kind == "returned"), None)
        assert all(not drained < f.ts < (back or 2**62) for f in run.findings if f.host_id == host)
    assert sum(v for (cause, _), v in run.out_h.items() if cause == "drains") > 0


def test_with_samples_a_slow_host_is_found_repaired_and_its_job_recovers(make_fleet_config: Any) -> None:
    slow = {
        "fraction": 0.05,
        "factor": [0.2, 0.3],
        "slow_at_start": 1.0,
        "intermittent_fraction": 0.0,
        "causes": {"thermal_throttling": 1.0},
    }
    config = make_fleet_config(hosts=64, job_hosts=8, rate_per_gpu_day=1e-6, slow=slow)
    settings = twin_settings(
        {"sample_interval_min": 30, "cure": {"diagnostics": {"thermal_throttling": 1.0}}}
    )
    run = run_twin(config, load_policy(None), settings, seed=5, start_ts=START_TS, days=4)
    slow_hosts = [run.fleet.host_id[h] for h, c in enumerate(run.fleet.slow_cause) if c is not None]
    assert slow_hosts
    for host in slow_hosts:
        kinds = kinds_on(run, host)
        assert "diagnostics_requested" in kinds and "returned" in kinds
        returned = next(a.ts for a in run.actions if a.host_id == host and a.kind == "returned")
        assert all(f.ts <= returned for f in run.findings if f.host_id == host)  # cured: never found again
    assert all(job.rate == 1.0 for job in run.book.jobs)  # every job back to full pace
    scored = summary(run)  # the truth is the hosts' traits, not what the repairs left of them
    assert scored["slow_hosts_found"] == scored["slow_hosts"] == len(slow_hosts)
    assert scored["precision"] == 1.0
