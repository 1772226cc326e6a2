"""Two-sample comparisons on collected per-unit values: Mann–Whitney U and a bootstrap CI.

Used for the fabric A/B, where means hide the tails: the test runs on per-host medians, so
one noisy host weighs as much as any other.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from analytics.jobs.errors import InsufficientDataError


class Comparison(NamedTuple):
    """B − A: difference of a statistic (median, or pooled rate) with a bootstrap CI, and Mann–Whitney U."""

    metric: str
    statistic: str  # "median" of per-unit values, or "pooled_rate" = Σ events / Σ exposure
    group_a: str
    group_b: str
    n_a: int
    n_b: int
    value_a: float
    value_b: float
    diff: float  # value_b − value_a
    diff_lo: float
    diff_hi: float
    rel_diff: float  # diff / value_a
    u_stat: float
    p_value: float
    rank_biserial: float  # effect size in [−1, 1]: > 0 when b tends to be larger


def bootstrap_median_diff(
    a: ArrayLike, b: ArrayLike, n_boot: int = 2000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float, float]:
    """median(b) − median(a) and its percentile-bootstrap CI (resampling each group)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.size == 0 or y.size == 0:
        raise InsufficientDataError("a bootstrap of medians", f"group sizes {x.size} and {y.size}")
    rng = np.random.default_rng(seed)
    mx = np.median(x[rng.integers(0, x.size, (n_boot, x.size))], axis=1)
    my = np.median(y[rng.integers(0, y.size, (n_boot, y.size))], axis=1)
    tail = (1.0 - confidence) / 2.0 * 100.0
    lo, hi = np.percentile(my - mx, [tail, 100.0 - tail])
    return float(np.median(y) - np.median(x)), float(lo), float(hi)


def compare(
    metric: str,
    a: ArrayLike,
    b: ArrayLike,
    group_a: str = "a",
    group_b: str = "b",
    n_boot: int = 2000,
    seed: int = 0,
) -> Comparison:
    """Compare two independent samples (e.g. per-host medians of two fabrics)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    x, y = x[np.isfinite(x)], y[np.isfinite(y)]
    if x.size < 2 or y.size < 2:
        raise InsufficientDataError(f"comparing {metric}", f"{group_a}: {x.size}, {group_b}: {y.size} values")
    u, p = stats.mannwhitneyu(y, x, alternative="two-sided")
    diff, lo, hi = bootstrap_median_diff(x, y, n_boot=n_boot, seed=seed)
    med_a = float(np.median(x))
    return Comparison(
        metric=metric,
        statistic="median",
        group_a=group_a,
        group_b=group_b,
        n_a=int(x.size),
        n_b=int(y.size),
        value_a=med_a,
        value_b=float(np.median(y)),
        diff=diff,
        diff_lo=lo,
        diff_hi=hi,
        rel_diff=diff / med_a if med_a else float("nan"),
        u_stat=float(u),
        p_value=float(p),
        rank_biserial=float(2.0 * u / (x.size * y.size) - 1.0),
    )


def bootstrap_rate_diff(
    events_a: ArrayLike,
    exposure_a: ArrayLike,
    events_b: ArrayLike,
    exposure_b: ArrayLike,
    n_boot: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float, float, float]:
    """Pooled rates Σe/Σx of A and B, their difference and its bootstrap CI (resampling units)."""
    ea, xa = np.asarray(events_a, dtype=float), np.asarray(exposure_a, dtype=float)
    eb, xb = np.asarray(events_b, dtype=float), np.asarray(exposure_b, dtype=float)
    rng = np.random.default_rng(seed)
    ia, ib = rng.integers(0, ea.size, (n_boot, ea.size)), rng.integers(0, eb.size, (n_boot, eb.size))
    boot = ea[ia].sum(1) / xa[ia].sum(1) * -1.0 + eb[ib].sum(1) / xb[ib].sum(1)
    tail = (1.0 - confidence) / 2.0 * 100.0
    lo, hi = np.percentile(boot, [tail, 100.0 - tail])
    ra, rb = ea.sum() / xa.sum(), eb.sum() / xb.sum()
    return float(ra), float(rb), float(rb - ra), float(lo), float(hi)


def compare_rates(
    metric: str,
    events_a: ArrayLike,
    exposure_a: ArrayLike,
    events_b: ArrayLike,
    exposure_b: ArrayLike,
    group_a: str = "a",
    group_b: str = "b",
    n_boot: int = 2000,
    seed: int = 0,
) -> Comparison:
    """Compare event rates (e.g. link downs per host-day): pooled-rate difference + U test on unit rates."""
    ea, xa = np.asarray(events_a, dtype=float), np.asarray(exposure_a, dtype=float)
    eb, xb = np.asarray(events_b, dtype=float), np.asarray(exposure_b, dtype=float)
    if ea.size < 2 or eb.size < 2 or xa.sum() <= 0 or xb.sum() <= 0:
        raise InsufficientDataError(
            f"comparing {metric}", f"{group_a}: {ea.size}, {group_b}: {eb.size} units"
        )
    ra, rb, diff, lo, hi = bootstrap_rate_diff(ea, xa, eb, xb, n_boot=n_boot, seed=seed)
    u, p = stats.mannwhitneyu(eb / xb, ea / xa, alternative="two-sided")
    return Comparison(
        metric=metric,
        statistic="pooled_rate",
        group_a=group_a,
        group_b=group_b,
        n_a=int(ea.size),
        n_b=int(eb.size),
        value_a=ra,
        value_b=rb,
        diff=diff,
        diff_lo=lo,
        diff_hi=hi,
        rel_diff=diff / ra if ra else float("nan"),
        u_stat=float(u),
        p_value=float(p),
        rank_biserial=float(2.0 * u / (ea.size * eb.size) - 1.0),
    )
