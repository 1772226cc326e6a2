"""The slow-host CUSUM: its false-alarm bound checked by simulation, and how soon it flags intermittent hosts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ground.slow_evidence import SequentialTest
from streams.core.policy import SlowHostPolicy


def _run_lengths(test: SequentialTest, share: float, hosts: int, windows: int, seed: int) -> np.ndarray:
    """Per simulated host, the window the CUSUM first reached ``h`` (1-based; -1: never in ``windows``),
    each window slow with probability ``share`` on its own (the worst case for evidence: no runs)."""
    rng = np.random.default_rng(seed)
    s = np.zeros(hosts)
    first = np.full(hosts, -1)
    for w in range(windows):
        slow = rng.random(hosts) < share
        s = np.minimum(np.maximum(0.0, s + np.where(slow, test.up, test.down)), test.h)
        first[(s >= test.h) & (first < 0)] = w + 1
    return first


def test_the_policy_states_its_false_alarm_rate_and_time_to_detect() -> None:
    policy = SlowHostPolicy()
    test = policy.sequential
    assert (test.p0, test.p1, test.h) == (0.0001, 0.30, 15.5)
    assert test.up == pytest.approx(math.log(3000)) and test.down == pytest.approx(math.log(0.7 / 0.9999))
    assert test.windows_to_flag() == 2  # a persistent slow host: 2 windows
    assert test.break_even() == pytest.approx(0.0426, abs=1e-4)
    # Lorden: >= e^15.5 windows between false alarms at p0 -> <= 0.053 a day per 1,000 hosts at 5 minutes
    assert test.false_alarms_per_day_per_1000_hosts(policy.window) == pytest.approx(0.0534, abs=1e-4)
    assert test.false_alarms_per_day_per_1000_hosts(policy.window) <= 0.1


@pytest.mark.parametrize("h", [3.0, 4.0, 5.0])
def test_simulated_run_length_of_a_host_slow_at_the_healthy_share_respects_the_bound(h: float) -> None:
    """Hosts slow in p0 of their windows (the worst healthy host the test is built for), simulated until
    each raises its false alarm: the mean run length is at least e^h. Checked where a false alarm takes
    several spurious windows and the run lengths are simulable (p0 = 0.1 %, h = 3-5); the policy's
    e^15.5 windows are beyond simulation, the bound is what its rate rests on."""
    test = SequentialTest(0.001, 0.30, h)
    first = _run_lengths(test, test.p0, hosts=4_000, windows=6_000, seed=int(h))
    done = first[first > 0]
    # the hosts not yet alarmed count with the windows they went without one (a lower bound of their run)
    mean = (done.sum() + 6_000 * (first < 0).sum()) / len(first)
    assert mean >= math.exp(h)


def test_a_healthy_host_under_the_healthy_share_never_alarms_in_a_month_of_windows() -> None:
    first = _run_lengths(SlowHostPolicy().sequential, 0.00005, hosts=2_000, windows=30 * 288, seed=7)
    assert (first < 0).all()


def test_an_intermittent_host_at_duty_point_four_is_found_within_20_windows() -> None:
    """Each window slow on its own with probability 0.4 (no episodes to help): the median host is found
    in 5 windows, 99 % within 20 (hosts in 30-minute episodes are found 2 windows into their first one)."""
    first = _run_lengths(SlowHostPolicy().sequential, 0.4, hosts=2_000, windows=200, seed=3)
    assert (first > 0).all()
    assert np.median(first) <= 6 and np.percentile(first, 99) <= 20


def test_a_host_slow_in_thirty_percent_of_its_windows_is_found_within_30() -> None:
    first = _run_lengths(SlowHostPolicy().sequential, 0.30, hosts=2_000, windows=200, seed=4)
    assert (first > 0).all()
    assert np.median(first) <= 8 and np.percentile(first, 99) <= 30


def test_bad_hypotheses_are_refused() -> None:
    with pytest.raises(ValueError, match="p0 < p1"):
        SequentialTest(0.3, 0.3, 15.0)
    with pytest.raises(ValueError, match="positive"):
        SequentialTest(0.001, 0.3, 0.0)
