"""Early-life hazard on top of a constant background, fitted together by maximum likelihood.

Faults of the early-life kinds also arrive at a constant rate all life long (and the same GPU
classes wear out); a power law alone takes that background for a flatter early-life curve, β
biased towards 1. Here λ(a) = (β/η)(a/η)^(β−1) + c, each unit watched over [entry, exit].

For a given β the other two parameters drop out in closed form but for one share: at the optimum
the expected events equal the observed n, so with p the early-life share of them,
ℓ(β) = max_p Σ_j log n·(p·u_j + (1 − p)·v) − n, where u_j = β·t_j^(β−1) / Σ_i(e_i^β − s_i^β) and
v = 1 / Σ_i(e_i − s_i). The inner problem is concave in p (one bounded 1-D search); β is found on
a log grid refined by a bounded search, and its CI is the profile-likelihood interval (χ²₁).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize, stats

from analytics.jobs.survival import observed

# Below this many events the two terms cannot be told apart in any fleet we simulate.
MIN_EVENTS = 20
# The interval a verdict of "no" is judged by: a 95 % interval misses the truth once in twenty fleets,
# and a truth check that says "no" on a good fit that often is one an operator learns to ignore.
STRICT_CONFIDENCE = 0.999


class EarlyLifeFit(NamedTuple):
    """MLE of λ(a) = (β/η)(a/η)^(β−1) + c; ``decided`` False (with ``reason``) when the data cannot say."""

    shape: float  # β of the early-life term
    shape_lo: float
    shape_hi: float
    scale: float  # η, days
    background_per_day: float  # c, events per unit per day
    early_share: float  # share of the events the early-life term explains
    events: int
    units: int
    exposure: float  # Σ (exit − entry), unit-days
    loglik: float
    confidence: float
    strict_lo: float  # the STRICT_CONFIDENCE interval of β
    strict_hi: float
    decided: bool
    reason: str


class _Data(NamedTuple):
    log_t: np.ndarray
    entry: np.ndarray
    exit: np.ndarray
    exposure: float


def _best_share(beta: float, d: _Data) -> tuple[float, float]:
    """(ℓ(β), p̂): the profile log-likelihood at β and the early-life share that attains it."""
    a = float(np.sum(d.exit**beta - d.entry**beta))
    n = d.log_t.size
    if a <= 0:
        return -np.inf, 0.0
    u = beta * np.exp((beta - 1.0) * d.log_t) / a
    v = 1.0 / d.exposure

    def neg(p: float) -> float:
        return -float(np.sum(np.log(n * (p * u + (1.0 - p) * v))))

    res = optimize.minimize_scalar(neg, bounds=(0.0, 1.0), method="bounded", options={"xatol": 1e-9})
    best_p, best = float(res.x), -float(res.fun)
    for edge in (0.0, 1.0):  # the optimum may sit on a bound the bounded search only approaches
        if -neg(edge) > best:
            best_p, best = edge, -neg(edge)
    return best - n, best_p


def _undecided(
    fit_lo: float, fit_hi: float, bounds: tuple[float, float], n: int, share: float, confidence: float
) -> str:
    if n < MIN_EVENTS:
        return f"{n} events, {MIN_EVENTS} needed to separate an early-life term from the background"
    if share * n < 1.0:
        return (
            f"the early-life term explains {share * n:.2g} of {n} events: the data show no early-life excess"
        )
    if fit_lo <= bounds[0] or fit_hi >= bounds[1]:
        return (
            f"the {confidence:.0%} interval of the shape reaches the search bound "
            f"[{bounds[0]:g}, {bounds[1]:g}]: the data do not pin it down"
        )
    return ""


def _profile_interval(
    profile: Callable[[float], float],
    beta: float,
    best: float,
    betas: np.ndarray,
    values: np.ndarray,
    confidence: float,
    bounds: tuple[float, float],
) -> tuple[float, float]:
    """The profile-likelihood interval of β (χ²₁), a search bound where the curve never drops far enough."""
    drop = stats.chi2.ppf(confidence, df=1) / 2.0

    def gap(b: float) -> float:
        return (best - profile(b)) - drop

    outside = best - values > drop  # grid points beyond the interval: each brackets a crossing
    below = [b for b, out in zip(betas[::-1], outside[::-1], strict=True) if b < beta and out]
    above = [b for b, out in zip(betas, outside, strict=True) if b > beta and out]
    lo = optimize.brentq(gap, below[0], beta) if below else bounds[0]
    hi = optimize.brentq(gap, beta, above[0]) if above else bounds[1]
    return float(lo), float(hi)


def fit_early_life(
    event_ages: ArrayLike,
    entry: ArrayLike,
    exit: ArrayLike,
    confidence: float = 0.95,
    bounds: tuple[float, float] = (0.05, 5.0),
    grid: int = 60,
) -> EarlyLifeFit:
    """MLE of (β, η, c) from event ages and each unit's observation window [entry, exit] (days)."""
    t, lo_w, hi_w = observed(event_ages, entry, exit, "an early-life fit")
    n = int(t.size)
    d = _Data(np.log(t), lo_w, hi_w, float(np.sum(hi_w - lo_w)))

    def profile(beta: float) -> float:
        return _best_share(beta, d)[0]

    betas = np.geomspace(bounds[0], bounds[1], grid)
    values = np.array([profile(b) for b in betas])
    i = int(np.argmax(values))
    lo_b, hi_b = betas[max(i - 1, 0)], betas[min(i + 1, grid - 1)]
    res = optimize.minimize_scalar(
        lambda b: -profile(b), bounds=(lo_b, hi_b), method="bounded", options={"xatol": 1e-7}
    )
    beta, best = (
        (float(res.x), -float(res.fun)) if -float(res.fun) >= values[i] else (float(betas[i]), values[i])
    )
    shape_lo, shape_hi = _profile_interval(profile, beta, best, betas, values, confidence, bounds)
    strict_lo, strict_hi = _profile_interval(profile, beta, best, betas, values, STRICT_CONFIDENCE, bounds)
    _, share = _best_share(beta, d)
    a = float(np.sum(hi_w**beta - lo_w**beta))
    k = share * n / a  # η^(−β)
    scale = float(k ** (-1.0 / beta)) if k > 0 else float("inf")
    reason = _undecided(shape_lo, shape_hi, bounds, n, share, confidence)
    return EarlyLifeFit(
        shape=beta,
        shape_lo=float(shape_lo),
        shape_hi=float(shape_hi),
        scale=scale,
        background_per_day=(1.0 - share) * n / d.exposure,
        early_share=share,
        events=n,
        units=int(lo_w.size),
        exposure=d.exposure,
        loglik=float(best),
        confidence=confidence,
        strict_lo=strict_lo,
        strict_hi=strict_hi,
        decided=not reason,
        reason=reason,
    )
