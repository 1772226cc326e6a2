"""The batch slow-host view runs the detector's window and evidence-reset rules, each written once in ``ground``:
its Polars windows are ``window_bounds`` on columns, its evidence resets at ``evidence_since`` as the detector's
verdict history does. Each check is run again with the shared rule swapped for another: both forms follow it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
import pytest

from analytics.jobs import slow_view
from ground import slow_evidence, slow_peers
from ground.slow_peers import PeerRule
from streams.core.peers import scores
from streams.core.peers.scores import Verdict, update_history
from streams.core.policy import load_policy
from streams.core.samples import folder, windows

MIN = 60_000


def _wider(ts: Any, interval_s: Any, window_ms: Any, larger: Callable[[Any, Any], Any] = max) -> Any:
    """Another window rule (windows three times as long), for both forms to follow."""
    return slow_peers.window_bounds(ts, interval_s, window_ms * 3, larger)


def _one_back(start: int, length: int, n: int) -> int:
    """Another reset rule (evidence kept only from the window just before), for both forms to follow."""
    return start - length


def _batch_windows(ts: list[int], intervals: list[int], window_ms: int) -> list[tuple[int, int]]:
    samples = pl.LazyFrame(
        {
            "host_id": [f"h{i}" for i in range(len(ts))],
            "cluster": "c",
            "ts": ts,
            "interval_s": intervals,
            "step_time_ms": 1.0,
            "bus_bw_gbps": 1.0,
        }
    )
    frame = slow_view.host_windows(samples, window_ms).collect().sort("host_id")
    got = dict(zip(frame["host_id"], zip(frame["window"], frame["length"], strict=True), strict=True))
    return [got[f"h{i}"] for i in range(len(ts))]


def _rows(seed: int) -> tuple[list[int], list[int], int]:
    rng = np.random.default_rng(seed)
    ts = [int(t) for t in rng.integers(946_684_800_000, 1_900_000_000_000, 200)]
    intervals = [int(i) for i in rng.choice([1, 10, 60, 299, 300, 301, 900, 3600, 86_400], 200)]
    return ts, intervals, int(rng.choice([MIN, 5 * MIN, 7 * MIN + 1]))


@pytest.mark.parametrize("rule", [slow_peers.window_bounds, _wider])
def test_the_batch_windows_are_the_detectors_window_bounds(
    rule: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(slow_view, "window_bounds", rule)
    for seed in range(3):
        ts, intervals, window_ms = _rows(seed)
        want = []
        for t, iv in zip(ts, intervals, strict=True):
            start, end = rule(t, iv, window_ms)
            want.append((start, end - start))
        assert _batch_windows(ts, intervals, window_ms) == want


def test_the_samples_fold_reads_the_same_window_rule() -> None:
    assert windows.window_bounds is folder.window_bounds is slow_peers.window_bounds


def _detector_peaks(history: list[tuple[int, bool]], length: int) -> float:
    policy = load_policy().slow_host
    state, peak = None, 0.0
    for start, slow in history:
        verdict = Verdict("h", start, start + length, 0.0, 0.0, slow, 1.0, 1.0)
        state, _ = update_history(state, verdict, "c", policy)
        peak = max(peak, state.s)
    return peak


def _batch_peak(history: list[tuple[int, bool]], length: int) -> float:
    frame = pl.LazyFrame(
        [("h", start, length, slow, 0.0) for start, slow in history],
        schema=["host_id", "window", "length", "slow", "excess"],
        orient="row",
    )
    rule = PeerRule.of(load_policy().slow_host)
    return float(slow_view.slow_hosts(frame, rule).collect()["evidence_nats"].item())


@pytest.mark.parametrize("since", [slow_evidence.evidence_since, _one_back])
def test_the_batch_evidence_resets_where_the_detectors_does(
    since: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(slow_view, "evidence_since", since)
    monkeypatch.setattr(scores, "evidence_since", since)
    length = 5 * MIN
    # slow windows with gaps of 0-4 windows between them: n = 4 keeps evidence over a gap of up to 2
    for gap in range(5):
        history = [(0, True), ((1 + gap) * length, True), ((2 + gap) * length, False)]
        assert _batch_peak(history, length) == pytest.approx(_detector_peaks(history, length)), gap
    rng = np.random.default_rng(7)
    for _ in range(20):
        starts = np.cumsum(rng.integers(1, 6, 30)) * length
        history = [(int(s), bool(rng.random() < 0.4)) for s in starts]
        assert _batch_peak(history, length) == pytest.approx(_detector_peaks(history, length))


def test_a_gap_the_shared_rule_forgives_keeps_the_evidence() -> None:
    """The rule the two forms share flags a host slow twice with one window missed between (n = 4)."""
    length = 5 * MIN
    history = [(0, True), (2 * length, True)]
    assert (
        _batch_peak(history, length) == _detector_peaks(history, length) == load_policy().slow_host.evidence
    )
