"""run_simulation: determinism, truth files, live pacing, clean stops."""

import hashlib
import threading
from pathlib import Path

import pytest

from producers.errors import SimulatorError
from producers.runner import SimulationRequest, run_simulation
from producers.sinks.base import MemorySink
from tests.producers.conftest import START, config_with


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_same_seed_gives_byte_identical_stream_and_truth(simulate, tmp_path: Path) -> None:
    r1, s1 = simulate(days=10, interval_s=7200, seed=11, keep_records=False, truth_out=tmp_path / "a")
    r2, s2 = simulate(days=10, interval_s=7200, seed=11, keep_records=False, truth_out=tmp_path / "b")
    assert s1.count == s2.count > 5_000
    assert s1.digest.hexdigest() == s2.digest.hexdigest()
    for name in ("manifest.json", "faults.parquet", "hosts.parquet"):
        assert _digest(tmp_path / "a" / name) == _digest(tmp_path / "b" / name)
    r3, s3 = simulate(days=10, interval_s=7200, seed=12, keep_records=False, truth_out=tmp_path / "c")
    assert s3.digest.hexdigest() != s1.digest.hexdigest()
    assert _digest(tmp_path / "c" / "faults.parquet") != _digest(tmp_path / "a" / "faults.parquet")
    assert r3.run_id != r1.run_id


def test_manifest_records_the_run(simulate, tmp_path: Path) -> None:
    import json

    result, _ = simulate(days=2, interval_s=7200, seed=5, truth_out=tmp_path / "t")
    manifest = json.loads((tmp_path / "t" / "manifest.json").read_text())
    assert manifest["seed"] == 5 and manifest["preset"] == "small" and manifest["mode"] == "fast-forward"
    assert manifest["sample_interval_s"] == 7200 and manifest["days"] == 2
    assert manifest["start_ts"] == START and manifest["end_ts"] == START + 2 * 86_400_000
    assert manifest["n_gpus"] == 8 * manifest["n_hosts"] == 384
    resolved = manifest["resolved"]
    assert resolved["weibull_shape"] == 0.7 and resolved["weibull_scale_days"] > 0
    assert resolved["cause_mix"]["faulty_gpu"] == pytest.approx(30.1 / 92.4)
    assert manifest["fleet"]["lemons"]["fraction"] == 0.08
    assert manifest["counts"] == result.counts
    assert manifest["counts_by_topic"] == {
        "fleet.errors": result.counts_by_topic["fleet.errors"],
        "fleet.inventory": 48,
        "fleet.samples": result.counts["HostSampled"],
    }


def test_run_id_tells_apart_runs_of_different_length_or_fleet(simulate, tmp_path: Path) -> None:
    def run(**fields) -> tuple[str, set[str]]:
        result, sink = simulate(seed=7, interval_s=21_600, keep_samples=False, truth_out=None, **fields)
        return result.run_id, {r["event_id"] for r in sink.records}

    short_id, short = run(days=2)
    long_id, long = run(days=6)
    lemony_id, lemony = run(days=2, fleet=config_with(lemons={"fraction": 0.3}))
    assert short and not short & long and not short & lemony
    assert len({short_id, long_id, lemony_id}) == 3
    assert run(days=2) == (short_id, short)  # the same request keeps its run_id


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.slept += seconds


def test_live_mode_paces_sim_time_to_the_wall_clock(settings) -> None:
    clock = FakeClock()
    request = SimulationRequest(
        mode="live", duration_s=30, speed=20, preset="small", sink="null", start_ts=START
    )
    result = run_simulation(
        settings, request, sink=MemorySink(keep_records=False), clock=clock, sleep=clock.sleep
    )
    assert result.interval_s == 10 and result.ticks == 60  # 30 s x 20 = 600 sim s of 10 s samples
    assert clock.slept == pytest.approx(30.0, abs=0.3)
    assert result.idle_s == pytest.approx(clock.slept) and result.max_lag_s == 0.0
    # hosts of the cohort arriving during the run report from their install on
    assert 0.8 * 60 * 48 < result.counts["HostSampled"] <= 60 * 48


def test_live_mode_at_real_speed_starts_at_the_wall_clock(settings) -> None:
    clock = FakeClock()
    request = SimulationRequest(mode="live", duration_s=1, speed=1, preset="small", sink="null")
    result = run_simulation(
        settings,
        request,
        sink=MemorySink(),
        clock=clock,
        sleep=clock.sleep,
        wall_ms=lambda: 1_700_000_003_456,
    )
    assert result.start_ts == 1_700_000_000_000


def test_live_mode_faster_than_real_time_never_runs_ahead_of_the_wall_clock(settings) -> None:
    clock = FakeClock()
    now = 1_700_000_003_456
    request = SimulationRequest(mode="live", duration_s=2, speed=100, preset="small", sink="null")
    result = run_simulation(
        settings, request, sink=MemorySink(), clock=clock, sleep=clock.sleep, wall_ms=lambda: now
    )
    assert result.start_ts == 1_699_999_800_000  # now - 2 s x 99, on the 10 s grid
    # event time at wall offset w is start + 100 w: at most now + w over the whole run
    assert result.end_ts <= now + 2_000 + settings.simulator.live_interval_s * 1000


def test_stop_flushes_the_sink_and_marks_the_run_interrupted(settings, tmp_path: Path) -> None:
    stop = threading.Event()

    class StopAfter(MemorySink):
        def write(self, batch) -> None:
            super().write(batch)
            if self.count > 2000:
                stop.set()

    sink = StopAfter(keep_records=False)
    request = SimulationRequest(
        preset="small", days=30, interval_s=600, sink="null", truth_out=tmp_path / "t"
    )
    result = run_simulation(settings, request, sink=sink, stop=stop)
    assert result.interrupted and sink.closed
    assert result.total == sink.count < 48 * 30 * 144
    assert result.manifest["interrupted"] is True


def test_an_interrupted_runs_truth_covers_only_what_was_emitted(settings, tmp_path: Path) -> None:
    import json

    import pyarrow.parquet as pq

    stop = threading.Event()

    class StopAfter(MemorySink):
        def write(self, batch) -> None:
            super().write(batch)
            if self.count > 48 * 24 * 10:  # about ten of the thirty days
                stop.set()

    sink = StopAfter()
    request = SimulationRequest(
        preset="small", days=30, interval_s=3600, sink="null", truth_out=tmp_path / "t"
    )
    result = run_simulation(settings, request, sink=sink, stop=stop)
    manifest = json.loads((tmp_path / "t" / "manifest.json").read_text())
    emitted = {(r["host_id"], r["ts"]) for r in sink.records}
    faults = pq.read_table(tmp_path / "t" / "faults.parquet").to_pylist()
    assert result.interrupted and faults
    assert all((f["host_id"], f["ts"]) in emitted for f in faults)
    assert manifest["faults"]["total"] == len(faults)
    last_ts = max(r["ts"] for r in sink.records)
    assert manifest["end_ts"] <= last_ts + 3_600_000 < manifest["planned_end_ts"]
    assert manifest["planned_end_ts"] == manifest["start_ts"] + 30 * 86_400_000
    agents = pq.read_table(tmp_path / "t" / "agents.parquet").to_pydict()
    emitted_seq: dict[str, int] = {}
    for r in sink.records:
        emitted_seq[r["host_id"]] = max(emitted_seq.get(r["host_id"], 0), r["agent_seq"])
    agents_seq = dict(zip(agents["host_id"], agents["last_agent_seq"], strict=True))
    assert {h: s for h, s in agents_seq.items() if s} == emitted_seq  # no seq of an unsent tick


def test_bad_requests_fail_with_a_clear_error(settings) -> None:
    with pytest.raises(SimulatorError, match="--days"):
        run_simulation(settings, SimulationRequest(days=0, sink="null"), sink=MemorySink())
    with pytest.raises(SimulatorError, match="--speed"):
        run_simulation(settings, SimulationRequest(mode="live", speed=0, sink="null"), sink=MemorySink())
