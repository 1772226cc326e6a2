"""The step-time test: a change no slower is rarely halted (alpha), one 5 % slower is halted within hours."""

from __future__ import annotations

import numpy as np

from streams.trains.step_time import StepSettings, StepTest, window


def run(seed: int, slower: float, windows: int = 168, hosts: int = 64) -> tuple[int | None, str]:
    """A campaign's hourly windows: two more hosts on the new version every six hours."""
    rng = np.random.default_rng(seed)
    test, seen = StepTest(StepSettings(slowdown=0.03, alpha=0.01, beta=0.05)), []
    for k in range(windows):
        up = min(hosts - 2, 2 + 2 * (k // 6))
        rel = np.exp(0.02 * rng.standard_normal(hosts))
        rel[:up] *= 1 + slower
        found = window(k, rel[:up].tolist(), rel[up:].tolist())
        assert found is not None
        seen.append(found)
        test.feed(seen)
        verdict = test.verdict()
        assert verdict is not None
        if verdict.state == "halt":
            return k, verdict.evidence()
    return None, ""


def test_a_change_no_slower_is_halted_about_alpha_of_the_time() -> None:
    halted = sum(run(seed, 0.0)[0] is not None for seed in range(200))
    assert halted <= 6  # alpha = 1 %: 2 expected of 200; 6 is past the binomial's 99.5th percentile


def test_a_change_five_percent_slower_halts_with_its_evidence() -> None:
    for seed in range(20):
        at, evidence = run(1000 + seed, 0.05)
        assert at is not None and at < 6, seed
        assert evidence.startswith("step time: +") and "log LR" in evidence


def test_a_window_needs_two_hosts_a_side() -> None:
    assert window(0, [1.0], [1.0, 1.01]) is None
    found = window(0, [1.05, 1.06], [1.0, 1.01, 0.99])
    assert found is not None and 0.04 < found.diff < 0.07 and found.se > 0
