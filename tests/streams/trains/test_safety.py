"""The rollout safety test: Wald's SPRT on which group each fault lands in, per fault class."""

from __future__ import annotations

import math

import numpy as np

from streams.trains.campaign import Fault
from streams.trains.safety import SprtSettings, classifier, sequential_test, step

SETTINGS = SprtSettings(rate_ratio=2.0, alpha=0.01, beta=0.05, classes=4)
CLASSIFY = classifier({"xid": ["fell_off_bus"]}, {"fatal_xid_burst": ["fell_off_bus"]})


def faults(ratio: float, n: int, upgraded: int, scope: int, seed: int) -> list[Fault]:
    """``n`` faults with ``upgraded`` of ``scope`` hosts on the new version, ``ratio`` times as fault-prone."""
    rng = np.random.default_rng(seed)
    p = ratio * upgraded / (ratio * upgraded + scope - upgraded)
    return [Fault(i, f"h{i}", "fatal_xid_burst", bool(u), upgraded) for i, u in enumerate(rng.random(n) < p)]


def test_one_fault_moves_the_log_likelihood_ratio_by_the_textbook_amounts() -> None:
    q0, q1 = 0.1, 2 * 10 / (2 * 10 + 90)
    assert math.isclose(step(0.0, True, 10, 100, SETTINGS), math.log(q1 / q0))
    assert math.isclose(step(0.0, False, 10, 100, SETTINGS), math.log((1 - q1) / (1 - q0)))
    assert step(0.0, True, 0, 100, SETTINGS) == 0.0  # nobody upgraded yet: nothing to compare


def test_a_change_three_times_worse_halts_and_an_equal_one_is_accepted() -> None:
    bad = sequential_test(faults(3.0, 400, 25, 500, seed=1), 500, CLASSIFY, SETTINGS, (50.0, 950.0))
    assert bad["xid"].state == "halt" and bad["xid"].llr >= SETTINGS.upper
    est, lo, hi = bad["xid"].rate_ratio
    assert lo < est < hi and "rate ratio" in bad["xid"].evidence()
    good = sequential_test(faults(1.0, 400, 25, 500, seed=1), 500, CLASSIFY, SETTINGS, (50.0, 950.0))
    assert good["xid"].state == "accepted" and good["xid"].llr < SETTINGS.upper


def test_chance_rarely_halts_an_equal_version() -> None:
    halts = sum(
        sequential_test(faults(1.0, 2000, 50, 500, seed=s), 500, CLASSIFY, SETTINGS, (1.0, 1.0))["xid"].state
        == "halt"
        for s in range(200)
    )
    assert halts <= 6  # alpha per class is 0.0025; the floor at the lower bound lets it try again, still rare


def test_rules_map_to_their_fault_class() -> None:
    assert (
        CLASSIFY("fatal_xid_burst") == "xid" and CLASSIFY("slow_host") == "slow" and CLASSIFY("x") == "other"
    )
