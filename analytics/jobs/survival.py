"""Survival statistics on collected arrays: Kaplan–Meier with delayed entry, and the power-law fit.

The power-law (Weibull-intensity) process has intensity λ(a) = (β/η)(a/η)^(β−1) in age a; each
unit is watched over its own age window [entry, exit] (left-truncated, right-censored). The
same likelihood fits a left-truncated Weibull to times of first failure.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize, stats

from analytics.jobs.errors import InsufficientDataError

_TINY = 1e-9


class PowerLawFit(NamedTuple):
    """MLE of the power-law process; CI from the profile likelihood (χ²₁)."""

    shape: float  # β: < 1 infant mortality, 1 constant rate, > 1 wear-out
    shape_lo: float
    shape_hi: float
    scale: float  # η, same unit as the ages (days)
    events: int
    units: int
    exposure: float  # Σ (exit − entry)
    loglik: float
    confidence: float


class KaplanMeier(NamedTuple):
    """Survival curve: at each distinct event time, units at risk, events, S(t) and its CI."""

    time: np.ndarray
    at_risk: np.ndarray
    events: np.ndarray
    survival: np.ndarray
    lower: np.ndarray
    upper: np.ndarray


def observed(
    event_ages: ArrayLike, entry: ArrayLike, exit: ArrayLike, what: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Event ages (clipped above 0) and the units' observation windows that have any length (days).

    Raises ``InsufficientDataError`` naming ``what`` with fewer than two events or no window.
    """
    t = np.clip(np.asarray(event_ages, dtype=float), _TINY, None)
    lo_w = np.clip(np.asarray(entry, dtype=float), 0.0, None)
    hi_w = np.asarray(exit, dtype=float)
    keep = hi_w > lo_w
    lo_w, hi_w = lo_w[keep], hi_w[keep]
    if t.size < 2 or lo_w.size == 0:
        raise InsufficientDataError(what, f"{t.size} events over {lo_w.size} observed units")
    return t, lo_w, hi_w


def _profile_loglik(beta: float, n: int, sum_log_t: float, entry: np.ndarray, exit_: np.ndarray) -> float:
    exposure = float(np.sum(exit_**beta - entry**beta))
    if exposure <= 0:
        return -np.inf
    return n * np.log(beta) + (beta - 1.0) * sum_log_t - n * np.log(exposure / n) - n


def fit_power_law(
    event_ages: ArrayLike,
    entry: ArrayLike,
    exit: ArrayLike,
    confidence: float = 0.95,
    bounds: tuple[float, float] = (0.02, 20.0),
) -> PowerLawFit:
    """MLE of (β, η) from event ages and each unit's observation window [entry, exit].

    For a given β the scale has a closed form, η^β = Σ(exit^β − entry^β) / n, so β is found by
    maximising the profile log-likelihood n·log β + (β−1)·Σ log t − n·log(Σ(exit^β − entry^β)/n) − n.
    """
    t, lo_w, hi_w = observed(event_ages, entry, exit, "a power-law fit")
    n = int(t.size)
    sum_log_t = float(np.sum(np.log(t)))

    def neg(beta: float) -> float:
        return -_profile_loglik(beta, n, sum_log_t, lo_w, hi_w)

    res = optimize.minimize_scalar(neg, bounds=bounds, method="bounded", options={"xatol": 1e-7})
    beta = float(res.x)
    best = -float(res.fun)
    drop = stats.chi2.ppf(confidence, df=1) / 2.0

    def gap(b: float) -> float:
        return (best - _profile_loglik(b, n, sum_log_t, lo_w, hi_w)) - drop

    lo = optimize.brentq(gap, bounds[0], beta) if gap(bounds[0]) > 0 else bounds[0]
    hi = optimize.brentq(gap, beta, bounds[1]) if gap(bounds[1]) > 0 else bounds[1]
    scale = float((np.sum(hi_w**beta - lo_w**beta) / n) ** (1.0 / beta))
    return PowerLawFit(
        shape=beta,
        shape_lo=float(lo),
        shape_hi=float(hi),
        scale=scale,
        events=n,
        units=int(lo_w.size),
        exposure=float(np.sum(hi_w - lo_w)),
        loglik=best,
        confidence=confidence,
    )


def kaplan_meier(
    entry: ArrayLike, exit: ArrayLike, event: ArrayLike, confidence: float = 0.95
) -> KaplanMeier:
    """Kaplan–Meier with delayed entry: a unit is at risk at t when entry < t ≤ exit.

    ``event`` is 1 where ``exit`` is a failure, 0 where it is a censoring time. The CI is
    Greenwood's on the log(−log S) scale, so it stays within [0, 1].
    """
    start = np.asarray(entry, dtype=float)
    stop = np.asarray(exit, dtype=float)
    died = np.asarray(event, dtype=bool)
    if stop.size == 0:
        raise InsufficientDataError("a Kaplan–Meier curve", "no units")
    times = np.unique(stop[died])
    starts, stops = np.sort(start), np.sort(stop)
    at_risk = np.searchsorted(starts, times, side="left") - np.searchsorted(stops, times, side="left")
    events = np.searchsorted(np.sort(stop[died]), times, side="right") - np.searchsorted(
        np.sort(stop[died]), times, side="left"
    )
    at_risk = np.maximum(at_risk, events)
    frac = 1.0 - events / at_risk
    surv = np.cumprod(frac)
    with np.errstate(divide="ignore", invalid="ignore"):
        green = np.cumsum(events / (at_risk * (at_risk - events)))
        z = stats.norm.ppf(0.5 + confidence / 2.0)
        log_s = np.log(surv)
        se = np.sqrt(green) / np.abs(log_s)
        lower = np.where(surv > 0, surv ** np.exp(z * se), 0.0)
        upper = np.where(surv > 0, surv ** np.exp(-z * se), 0.0)
    lower = np.nan_to_num(lower, nan=1.0)
    upper = np.nan_to_num(upper, nan=1.0)
    return KaplanMeier(times, at_risk.astype(int), events.astype(int), surv, lower, upper)


def power_law_cumulative_hazard(age: ArrayLike, shape: float, scale: float) -> np.ndarray:
    """Λ(a) = (a/η)^β: expected events per unit by age a."""
    return (np.asarray(age, dtype=float) / scale) ** shape


def power_law_intensity(age: ArrayLike, shape: float, scale: float) -> np.ndarray:
    """λ(a) = (β/η)(a/η)^(β−1): events per unit per unit of age."""
    a = np.clip(np.asarray(age, dtype=float), _TINY, None)
    return (shape / scale) * (a / scale) ** (shape - 1.0)
