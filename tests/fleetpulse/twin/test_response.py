"""The fleet's answer to actions, folded without a broker; and a simulation that asks it before each tick."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from fleetpulse.twin.response import FleetResponse
from fleetpulse.twin.settings import twin_settings
from ground.settings import Settings
from producers.fleet import Fleet, build_fleet
from producers.runner import SimulationRequest, run_simulation
from producers.sinks.base import MemorySink
from streams.core.actions import Action
from tests.fleetpulse.twin.conftest import START_TS, fleet_config

DAY = 86_400_000
LEMONS = {"fraction": 0.1, "kinds": {"dram_uce": 1.0}, "onset_window": 0.1, "max_repeats": 1000}


def lemon_fleet(days: float = 20) -> Fleet:
    config = fleet_config(hosts=40, job_hosts=4, rate_per_gpu_day=1e-6, lemons=LEMONS)
    return build_fleet(config, 3, START_TS, START_TS + int(days * DAY))


def act(fleet: Fleet, h: int, kind: str, ts: int, operation: str = "rma") -> Action:
    return Action(f"{kind}-{h}-{ts}", kind, fleet.host_id[h], "c", "d", operation, ts, finding_id="f")


def test_a_drained_host_sends_no_fault_until_it_returns() -> None:
    fleet = lemon_fleet()
    r = FleetResponse(fleet, twin_settings(), seed=3)
    r.apply([act(fleet, 0, "drain_requested", 10 * DAY)])
    assert not r.faults_off(0, 9 * DAY, lemon=False) and r.faults_off(0, 11 * DAY, lemon=False)
    r.apply([act(fleet, 0, "rma_opened", 11 * DAY), act(fleet, 0, "returned", 14 * DAY)])
    assert not r.faults_off(0, 15 * DAY, lemon=False)
    gpus = fleet.config.gpus_per_host
    assert r.report()["gpu_h_out_of_service"] == {"drains": 24.0 * gpus, "repairs": 72.0 * gpus}


def test_a_cured_lemon_stops_failing_and_an_action_read_twice_counts_once() -> None:
    fleet = lemon_fleet()
    lemon = next(h for h, k in enumerate(fleet.lemon_kind) if k is not None)
    cured = FleetResponse(fleet, twin_settings({"cure": {"rma": {"dram_uce": 1.0}}}), seed=3)
    rma = act(fleet, lemon, "rma_opened", START_TS + 5 * DAY)
    cured.apply([rma, rma, act(fleet, lemon, "returned", START_TS + 6 * DAY)])
    assert cured.faults_off(lemon, START_TS + 7 * DAY, lemon=True)  # its bad part is gone
    assert not cured.faults_off(lemon, START_TS + 7 * DAY, lemon=False)  # random faults go on
    assert cured.report()["repairs"] == 1 and cured.report()["failed_repairs"] == 0
    failed = FleetResponse(fleet, twin_settings({"cure": {"rma": {}}}), seed=3)
    failed.apply([rma, act(fleet, lemon, "returned", START_TS + 6 * DAY)])
    assert not failed.faults_off(lemon, START_TS + 7 * DAY, lemon=True)
    assert failed.report()["failed_repairs"] == 1


def test_a_retired_host_never_comes_back() -> None:
    fleet = lemon_fleet()
    r = FleetResponse(fleet, twin_settings(), seed=3)
    r.apply([act(fleet, 1, "retired", 3 * DAY), act(fleet, 1, "returned", 4 * DAY)])
    assert r.faults_off(1, 5 * DAY, lemon=False) and r.report()["retired"] == [fleet.host_id[1]]
    assert r.report(end_ts=5 * DAY)["gpu_h_out_of_service"] == {"retired": 48.0 * fleet.config.gpus_per_host}


class CureAll:
    """An answer that cures every lemon at ``cure_ts`` (as a repair would), read before each tick."""

    def __init__(self, fleet: Fleet, cure_ts: int) -> None:
        self.fleet, self.cure_ts, self.asked = fleet, cure_ts, 0

    def until(self, ts: int) -> None:
        self.asked += 1

    def faults_off(self, host: int, ts: int, lemon: bool) -> bool:
        return lemon and ts > self.cure_ts

    def report(self, sent: Any) -> dict[str, Any]:
        return {"asked": self.asked}


def test_closed_loop_the_agents_and_the_truth_leave_out_the_faults_held_back(tmp_path: Path) -> None:
    config = fleet_config(hosts=40, job_hosts=4, rate_per_gpu_day=1e-6, lemons=LEMONS)
    cure_ts = START_TS + 8 * DAY

    def run(answer: Any, out: Path) -> tuple[pl.DataFrame, MemorySink, dict[str, Any]]:
        sink = MemorySink()
        request = SimulationRequest(
            days=20, fleet=config, seed=3, start_ts=START_TS, sink="null", truth_out=out
        )
        result = run_simulation_quiet(request, sink, answer)
        return pl.read_parquet(out / "faults.parquet"), sink, result

    def run_simulation_quiet(request: SimulationRequest, sink: MemorySink, answer: Any) -> dict[str, Any]:
        return run_simulation(Settings.load(), request, sink=sink, answer=answer).manifest

    open_faults, open_sink, _ = run(None, tmp_path / "open")
    closed_faults, closed_sink, manifest = run(lambda fleet: CureAll(fleet, cure_ts), tmp_path / "closed")
    lemon_open = open_faults.filter(pl.col("phase") == "lemon")
    assert lemon_open.filter(pl.col("ts") > cure_ts).height > 0  # open loop the lemons go on failing
    lemon_closed = closed_faults.filter(pl.col("phase") == "lemon")
    assert lemon_closed.height > 0 and lemon_closed["ts"].max() <= cure_ts  # type: ignore[operator]
    assert (
        closed_faults.filter(pl.col("phase") != "lemon").height
        == open_faults.filter(pl.col("phase") != "lemon").height
    )
    assert manifest["closed_loop"]["asked"] == 80  # before every tick but the first (20 days of 6 h ticks)

    def events(sink: MemorySink) -> set[tuple[str, int, str]]:
        return {
            (r["host_id"], r["ts"], r["event_type"]) for r in sink.records if r["event_type"] != "HostSampled"
        }

    held_back = events(open_sink) - events(closed_sink)
    assert events(closed_sink) <= events(open_sink) and held_back  # nothing new, the lemons' repeats gone
    assert {h for h, _, _ in held_back} <= set(lemon_open["host_id"].to_list())
    assert min(ts for _, ts, _ in held_back) > cure_ts


def test_a_host_back_from_a_repair_that_did_not_cure_it_relapses() -> None:
    """The fleet's truth of incidents: a host that returns still faulty is a new incident from its return;
    one cured, or still out, is not."""
    fleet = lemon_fleet()
    lemon = next(h for h, k in enumerate(fleet.lemon_kind) if k is not None)
    t = START_TS + 5 * DAY
    failed = FleetResponse(fleet, twin_settings({"cure": {"rma": {}}}), seed=3)
    failed.apply([act(fleet, lemon, "rma_opened", t), act(fleet, lemon, "returned", t + DAY)])
    failed.apply([act(fleet, lemon, "rma_opened", t + 3 * DAY)])  # out again, not back yet
    assert failed.report()["relapses"] == {fleet.host_id[lemon]: [t + DAY]}
    cured = FleetResponse(fleet, twin_settings({"cure": {"rma": {"dram_uce": 1.0}}}), seed=3)
    cured.apply([act(fleet, lemon, "rma_opened", t), act(fleet, lemon, "returned", t + DAY)])
    assert cured.report()["relapses"] == {}
