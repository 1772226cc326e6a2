"""--continue-from: the same fleet goes on, later in event time, with agent_seq continuing."""

from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from fleetpulse.evaluation.detection import ScoringError
from fleetpulse.evaluation.sources import load_truth
from producers.errors import SimulatorError
from producers.fleet import DAY_MS
from producers.runner import SimulationRequest, run_simulation
from producers.sinks.base import MemorySink


def _last_seq(records: list[dict]) -> dict[str, int]:
    last: dict[str, int] = defaultdict(int)
    for r in records:
        last[r["host_id"]] = max(last[r["host_id"]], r["agent_seq"])
    return last


@pytest.fixture
def history(simulate, tmp_path: Path):
    result, sink = simulate(
        preset="demo", days=20, interval_s=86_400, seed=4, keep_samples=True, truth_out=tmp_path / "h"
    )
    return result, sink, tmp_path / "h"


def test_live_continuation_picks_up_fleet_time_and_sequence(history, settings, tmp_path: Path) -> None:
    hist, hist_sink, truth = history
    now = [0.0]

    def clock() -> float:
        return now[0]

    def sleep(s: float) -> None:
        now[0] += s

    request = SimulationRequest(
        mode="live",
        duration_s=600,
        speed=36,
        interval_s=3600,
        continue_from=truth,
        sink="null",
        truth_out=tmp_path / "live",
    )
    live_sink = MemorySink()
    live = run_simulation(settings, request, sink=live_sink, clock=clock, sleep=sleep)
    assert live.start_ts == hist.end_ts and live.end_ts == hist.end_ts + 6 * 3_600_000
    assert live.run_id != hist.run_id and live.interval_s == 3600
    assert live.manifest["continues_run_id"] == hist.run_id and live.manifest["segment"] == 1
    assert "HostInventoried" not in live.counts
    assert min(r["ts"] for r in live_sink.records) > hist.end_ts
    # agent_seq goes on from the history, per host, without gap or repeat
    before = _last_seq(hist_sink.records)
    first: dict[str, int] = {}
    for r in live_sink.records:
        first.setdefault(r["host_id"], r["agent_seq"])
    assert all(first[h] == before[h] + 1 for h in first)
    agents = pq.read_table(truth / "agents.parquet").to_pydict()
    assert dict(zip(agents["host_id"], agents["last_agent_seq"], strict=True)) == dict(before)
    # same fleet: hosts and hidden traits identical
    h1 = pq.read_table(truth / "hosts.parquet")
    h2 = pq.read_table(tmp_path / "live" / "hosts.parquet")
    assert h1.equals(h2)


def test_lemons_keep_repeating_across_the_seam(history, settings, tmp_path: Path) -> None:
    hist, _, truth = history
    request = SimulationRequest(
        days=20, interval_s=86_400, continue_from=truth, sink="null", truth_out=tmp_path / "c"
    )
    run_simulation(settings, request, sink=MemorySink(keep_records=False))
    before, after = (
        [f for f in pq.read_table(part / "faults.parquet").to_pylist() if f["phase"] == "lemon"]
        for part in (truth, tmp_path / "c")
    )
    kinds = {h["host_id"]: h["lemon_kind"] for h in pq.read_table(truth / "hosts.parquet").to_pylist()}
    # the continuation goes on with the lemons of the history: same hosts, same fault, same GPU or port
    assert after and all(f["ts"] > hist.end_ts for f in after)
    where = {f["host_id"]: (f["kind"], f["gpu"], f["port"]) for f in before}
    assert {f["host_id"] for f in after} <= set(where)
    assert all((f["kind"], f["gpu"], f["port"]) == where[f["host_id"]] for f in after)
    assert all(f["kind"] == kinds[f["host_id"]] for f in before + after)
    lemons: dict[str, list[int]] = defaultdict(list)
    for f in before + after:
        if f["kind"] != "link_flap":
            lemons[f["host_id"]].append(f["ts"])
    across = [h for h, times in lemons.items() if min(times) <= hist.end_ts < max(times)]
    assert across  # the repeat rhythm below is checked over the seam, not only within a segment
    cap = hist.manifest["fleet"]["lemons"]["max_repeats"]
    for host, times in lemons.items():
        gaps = np.diff(sorted(times)) / DAY_MS
        assert ((gaps >= 1) & (gaps <= 3)).all(), host
        assert len(times) <= cap


def test_continuation_is_deterministic_and_guarded(history, settings, tmp_path: Path) -> None:
    _, _, truth = history
    digests = []
    for _ in range(2):
        sink = MemorySink(keep_records=False)
        run_simulation(
            settings, SimulationRequest(days=2, interval_s=21600, continue_from=truth, sink="null"), sink=sink
        )
        digests.append(sink.digest.hexdigest())
    assert digests[0] == digests[1]
    with pytest.raises(SimulatorError, match="seed"):
        run_simulation(
            settings, SimulationRequest(days=1, seed=99, continue_from=truth, sink="null"), sink=MemorySink()
        )
    with pytest.raises(SimulatorError, match="truth directory"):
        run_simulation(
            settings, SimulationRequest(days=1, continue_from=tmp_path, sink="null"), sink=MemorySink()
        )


def test_score_joins_a_history_and_its_live_continuation(history, settings, tmp_path: Path) -> None:
    hist, _, truth = history
    request = SimulationRequest(
        mode="live",
        duration_s=600,
        speed=720,
        interval_s=600,
        continue_from=truth,
        sink="null",
        truth_out=tmp_path / "live",
    )
    now = [0.0]

    def sleep(s: float) -> None:
        now[0] += s

    live = run_simulation(
        settings, request, sink=MemorySink(keep_records=False), clock=lambda: now[0], sleep=sleep
    )
    hosts, faults, manifest = load_truth([truth, tmp_path / "live"])
    assert (manifest["start_ts"], manifest["end_ts"]) == (hist.start_ts, live.end_ts)
    assert [(s["mode"], s["sample_interval_s"]) for s in manifest["segments"]] == [
        ("fast-forward", 86_400),
        ("live", 600),
    ]
    assert manifest["segments"][1]["start_ts"] == manifest["segments"][0]["end_ts"]
    parts = [pq.read_table(d / "faults.parquet").num_rows for d in (truth, tmp_path / "live")]
    assert faults.height == sum(parts) and parts[1] > 0
    assert hosts.height == hist.manifest["n_hosts"]
    with pytest.raises(ScoringError, match="does not continue"):
        load_truth([tmp_path / "live", truth])


def test_a_continued_continuation_keeps_the_original_fleet(simulate, settings, tmp_path: Path) -> None:
    simulate(days=4, interval_s=21_600, seed=3, keep_records=False, truth_out=tmp_path / "s0")
    for segment in (1, 2):
        request = SimulationRequest(
            days=4,
            interval_s=21_600,
            continue_from=tmp_path / f"s{segment - 1}",
            sink="null",
            truth_out=tmp_path / f"s{segment}",
        )
        result = run_simulation(settings, request, sink=MemorySink(keep_records=False))
        assert result.manifest["segment"] == segment
    h0, h2 = (pq.read_table(tmp_path / s / "hosts.parquet") for s in ("s0", "s2"))
    assert h0.equals(h2)
