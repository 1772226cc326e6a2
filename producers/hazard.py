"""The power-law (Weibull-intensity) failure process in host age: sampling, calibration, MLE fit.

Intensity λ(a) = (β/η)(a/η)^(β−1), cumulative Λ(a) = (a/η)^β; β < 1 is infant mortality.
Ages are in days. Every function is pure; randomness comes in as a Generator.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.optimize import minimize_scalar


def cumulative(age_days: np.ndarray | float, shape: float, scale_days: float) -> np.ndarray:
    """Λ(a): expected number of events from age 0 to ``age_days``."""
    return (np.maximum(np.asarray(age_days, dtype=float), 0.0) / scale_days) ** shape


def sample(
    rng: np.random.Generator,
    age_from: float,
    age_to: float,
    shape: float,
    scale_days: float,
    weight: float = 1.0,
) -> np.ndarray:
    """Event ages in (age_from, age_to] of a process with intensity ``weight``·λ(a), sorted."""
    if age_to <= age_from:
        return np.empty(0)
    lo, hi = weight * cumulative(age_from, shape, scale_days), weight * cumulative(age_to, shape, scale_days)
    n = rng.poisson(float(hi - lo))
    # In Λ-space the process is a unit-rate Poisson process: uniform points, mapped back through Λ⁻¹.
    u = np.sort(rng.uniform(lo, hi, size=n))
    return scale_days * (u / weight) ** (1.0 / shape)


def calibrate_scale(
    age_from: np.ndarray,
    age_to: np.ndarray,
    shape: float,
    expected_events: float,
    weights: np.ndarray | None = None,
) -> float:
    """The scale η for which hosts observed over [age_from, age_to] expect ``expected_events`` in total."""
    w = np.ones_like(age_from, dtype=float) if weights is None else weights
    exposure = float(np.sum(w * (np.maximum(age_to, 0) ** shape - np.maximum(age_from, 0) ** shape)))
    if expected_events <= 0 or exposure <= 0:
        raise ValueError("calibration needs a positive expected count and a positive observed exposure")
    return (exposure / expected_events) ** (1.0 / shape)


class PowerLawFit(NamedTuple):
    shape: float
    scale_days: float
    n_events: int


def fit(
    event_ages: np.ndarray,
    window_from: np.ndarray,
    window_to: np.ndarray,
    weights: np.ndarray | None = None,
) -> PowerLawFit:
    """Maximum-likelihood (β, η) from event ages and each unit's observed age window (left-truncated).

    ``weights`` are known per-unit intensity multipliers (``window_*`` and ``weights`` align).
    The profile likelihood in β is maximised numerically; η follows in closed form.
    """
    ages = np.asarray(event_ages, dtype=float)
    a0 = np.maximum(np.asarray(window_from, dtype=float), 0.0)
    a1 = np.asarray(window_to, dtype=float)
    w = np.ones_like(a0) if weights is None else np.asarray(weights, dtype=float)
    n = len(ages)
    if n < 2:
        raise ValueError(f"need at least 2 events to fit, got {n}")
    sum_log = float(np.sum(np.log(ages)))

    def exposure(beta: float) -> float:
        return float(np.sum(w * (a1**beta - a0**beta)))

    def neg_profile(beta: float) -> float:
        return -(n * np.log(beta) - n * np.log(exposure(beta) / n) + (beta - 1.0) * sum_log)

    best = minimize_scalar(neg_profile, bounds=(0.05, 5.0), method="bounded", options={"xatol": 1e-6})
    beta = float(best.x)
    return PowerLawFit(beta, (exposure(beta) / n) ** (1.0 / beta), n)
