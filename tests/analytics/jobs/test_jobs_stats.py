"""Two-sample comparisons: a real difference is found and bracketed, no difference is not."""

from __future__ import annotations

import numpy as np
import pytest

from analytics.jobs.errors import InsufficientDataError
from analytics.jobs.stats import compare, compare_rates


def test_difference_in_medians_is_bracketed_and_significant() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.normal(100, 5, 300), rng.normal(103, 5, 300)
    c = compare("step", a, b, "ib", "roce", n_boot=1000)
    assert c.diff_lo < 3.0 < c.diff_hi and c.diff_lo > 0
    assert c.p_value < 1e-6 and c.rank_biserial > 0
    assert c.value_b - c.value_a == pytest.approx(c.diff)


def test_no_difference_has_a_ci_around_zero() -> None:
    rng = np.random.default_rng(1)
    c = compare("step", rng.normal(100, 5, 300), rng.normal(100, 5, 300), n_boot=1000)
    assert c.diff_lo < 0 < c.diff_hi and c.p_value > 0.01


def test_pooled_rates() -> None:
    rng = np.random.default_rng(2)
    days = np.full(500, 90.0)
    ev_a, ev_b = rng.poisson(0.01 * 90, 500), rng.poisson(0.02 * 90, 500)
    c = compare_rates("downs", ev_a, days, ev_b, days, n_boot=1000)
    assert c.value_a == pytest.approx(ev_a.sum() / days.sum())
    assert c.diff_lo < 0.01 < c.diff_hi and c.p_value < 1e-3


def test_too_few_values() -> None:
    with pytest.raises(InsufficientDataError):
        compare("x", [1.0], [2.0, 3.0])
