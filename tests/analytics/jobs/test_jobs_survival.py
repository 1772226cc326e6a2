"""Power-law MLE and Kaplan–Meier on data with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from analytics.jobs.errors import InsufficientDataError
from analytics.jobs.survival import fit_power_law, kaplan_meier, power_law_cumulative_hazard


def _simulate(
    rng: np.random.Generator, beta: float, eta: float, entry: np.ndarray, exit_: np.ndarray
) -> np.ndarray:
    lo, hi = (entry / eta) ** beta, (exit_ / eta) ** beta
    counts = rng.poisson(hi - lo)
    u = rng.uniform(np.repeat(lo, counts), np.repeat(hi, counts))
    return eta * u ** (1 / beta)


@pytest.mark.parametrize("beta", [0.5, 0.7, 1.0, 1.8])
def test_power_law_fit_recovers_shape_from_truncated_windows(beta: float) -> None:
    rng = np.random.default_rng(42)
    entry = rng.uniform(0, 400, 4000)
    exit_ = entry + 90
    eta = 400 / 3 ** (1 / beta)
    ages = _simulate(rng, beta, eta, entry, exit_)
    fit = fit_power_law(ages, entry, exit_)
    assert fit.events == ages.size > 1000
    assert fit.shape_lo < beta < fit.shape_hi
    assert abs(fit.shape - beta) / beta < 0.1
    assert fit.shape_hi - fit.shape_lo < 0.25 * beta
    # The fitted process reproduces the observed count over the windows.
    expected = power_law_cumulative_hazard(exit_, fit.shape, fit.scale) - power_law_cumulative_hazard(
        entry, fit.shape, fit.scale
    )
    assert expected.sum() == pytest.approx(fit.events, rel=1e-6)


def test_power_law_ci_covers_truth_most_of_the_time() -> None:
    rng = np.random.default_rng(7)
    hits = 0
    for _ in range(40):
        entry = rng.uniform(0, 200, 300)
        exit_ = entry + 60
        fit = fit_power_law(_simulate(rng, 0.7, 50.0, entry, exit_), entry, exit_)
        hits += fit.shape_lo <= 0.7 <= fit.shape_hi
    assert hits >= 34  # nominal 95 % → expect ~38 of 40


def test_power_law_needs_events() -> None:
    with pytest.raises(InsufficientDataError):
        fit_power_law([5.0], [0.0, 0.0], [10.0, 10.0])


def test_kaplan_meier_matches_hand_computation() -> None:
    # Units: (entry, exit, event) — unit 4 enters late, at 2.5, so it is not at risk at t=2.
    km = kaplan_meier([0, 0, 0, 0, 2.5], [2, 3, 3, 5, 6], [1, 1, 0, 0, 1])
    assert km.time.tolist() == [2, 3, 6]
    assert km.at_risk.tolist() == [4, 4, 1]
    assert km.events.tolist() == [1, 1, 1]
    assert km.survival == pytest.approx([3 / 4, 3 / 4 * 3 / 4, 0.0])
    assert np.all(km.lower <= km.survival) and np.all(km.survival <= km.upper)


def test_kaplan_meier_exponential_survival() -> None:
    rng = np.random.default_rng(3)
    t = rng.exponential(10.0, 5000)
    stop = np.minimum(t, 15.0)
    km = kaplan_meier(np.zeros_like(t), stop, t <= 15.0)
    at10 = km.survival[np.searchsorted(km.time, 10.0) - 1]
    assert at10 == pytest.approx(np.exp(-1.0), abs=0.02)
