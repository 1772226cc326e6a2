"""The soak's verdict: memory against the reference mark, lag judged by its trend against the input."""

from __future__ import annotations

from typing import Any

import pytest

from bench.soak_verdict import judge, lag_row, memory_rows, reference_minute, slope


def _sample(t: float, rss: float, lag: int | None, produced: int) -> dict[str, Any]:
    return {
        "t_min": t,
        "parts": {"archive": {"rss_mb": rss, "fds": 20, "cpu_s": t * 30, "pids": [1]}},
        "lags": {"g": {"lag": lag, "produced": produced}},
    }


def _run(rss: list[float], lags: list[int | None], per_min: int = 100_000) -> list[dict[str, Any]]:
    return [_sample(float(t), r, g, t * per_min) for t, (r, g) in enumerate(zip(rss, lags, strict=True))]


def test_the_reference_is_ten_minutes_or_half_a_short_run() -> None:
    assert reference_minute(60) == 10
    assert reference_minute(20) == 10
    assert reference_minute(3) == 1.5


def test_memory_is_judged_at_the_end_against_the_reference_mark_not_the_start() -> None:
    grows_early = [100.0] * 5 + [200.0] * 16  # doubling before minute 10 is warm-up, not a leak
    rows = memory_rows(_run(grows_early, [0] * 21), reference_minute(20))
    assert rows[0]["ratio"] == 1.0 and rows[0]["within"]
    creeping = [200.0] * 11 + [200.0 + 3 * i for i in range(1, 11)]  # 230 / 200 = 1.15 at the end
    row = memory_rows(_run(creeping, [0] * 21), 10)[0]
    assert row["ratio"] == 1.15 and not row["within"]
    assert row["cores"] == 0.5


def test_ten_percent_exactly_is_within() -> None:
    assert memory_rows(_run([100.0] * 11 + [110.0], [0] * 12), 10)[0]["within"]


def test_a_sawtooth_lag_is_bounded_and_a_slow_climb_is_not() -> None:
    sawtooth = [(t * 37_000) % 150_000 for t in range(61)]  # a checkpoint's worth, up and down
    assert lag_row("g", _run([1.0] * 61, sawtooth))["bounded"]
    climbing = [t * 2_000 for t in range(61)]  # 2 % of 100,000 a minute: falls behind for good
    row = lag_row("g", _run([1.0] * 61, climbing))
    assert (
        not row["bounded"] and round(row["trend_per_min"]) == 2_000 and round(row["input_per_min"]) == 100_000
    )


def test_a_climb_under_the_tolerance_or_the_floor_is_bounded() -> None:
    assert lag_row("g", _run([1.0] * 61, [t * 500 for t in range(61)]))["bounded"]  # 0.5 % of the input
    quiet = lag_row("g", _run([1.0] * 61, [t * 20 for t in range(61)], per_min=0))  # 600 < 1,000 records
    assert quiet["bounded"]


def test_only_the_last_half_counts() -> None:
    caught_up = [t * 10_000 for t in range(31)] + [0] * 30  # behind at first, then caught up
    assert lag_row("g", _run([1.0] * 61, caught_up))["bounded"]


def test_an_unknown_lag_in_the_last_half_is_not_bounded() -> None:
    lags: list[int | None] = [0] * 61
    lags[50] = None
    assert not lag_row("g", _run([1.0] * 61, lags))["bounded"]


def test_slope_is_least_squares() -> None:
    assert slope([0, 1, 2, 3], [1, 3, 5, 7]) == 2
    assert slope([5, 5], [1, 9]) == 0


def test_the_verdict_needs_both() -> None:
    steady = judge(_run([100.0] * 61, [0] * 61), 60)
    assert steady["met"] and steady["memory_ok"] and steady["lag_ok"]
    lagging = judge(_run([100.0] * 61, [t * 5_000 for t in range(61)]), 60)
    assert lagging["memory_ok"] and not lagging["lag_ok"] and not lagging["met"]


def test_waiting_for_a_core_is_reported_beside_the_cores_used() -> None:
    """A part at 0.4 of a core is starved or idle: the run-queue wait says which (0 when not sampled)."""
    samples = _run([100.0] * 21, [0] * 21)
    for s in samples:
        s["parts"]["archive"]["queued_s"] = s["t_min"] * 18  # 0.3 of a core's worth of waiting
    row = memory_rows(samples, 10)[0]
    assert row["cores"] == 0.5 and row["queued"] == 0.3
    assert memory_rows(_run([100.0] * 21, [0] * 21), 10)[0]["queued"] == 0.0


def test_a_sawtooth_rss_is_judged_on_its_band_and_a_rising_floor_is_not_within() -> None:
    """RSS swinging 700-1,100 MB with each flush: the point rule depends on where the samples fall, the
    band (lowest and highest of five samples) does not; a floor that climbs 15 % is out of the band."""
    swing = ([1100.0, 800.0, 700.0, 900.0] * 8)[:29]  # one sample a minute: a trough at 10, a crest at 28
    row = memory_rows(_run(swing, [0] * 29), 10)[0]
    assert row["ratio"] == pytest.approx(1100.0 / 700.0) and not row["within"]  # a crest against a trough
    assert row["floor_ratio"] == 1.0 and row["ceiling_ratio"] == 1.0 and row["band_within"]
    rising = [v + (115.0 if t > 20 else 0.0) for t, v in enumerate(swing)]
    row = memory_rows(_run(rising, [0] * 29), 10)[0]
    assert row["floor_ratio"] == pytest.approx(815.0 / 700.0) and not row["band_within"]
