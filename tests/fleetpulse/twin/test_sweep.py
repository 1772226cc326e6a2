"""Sweep figures: means with Student-t intervals, and differences paired seed by seed."""

from __future__ import annotations

import pytest

from fleetpulse.backtest.sweep import Variant
from fleetpulse.twin.sweep import VariantOutcome, interval
from streams.core.policy import load_policy


def test_interval_is_the_student_t_half_width() -> None:
    ci = interval([1.0, 2.0, 3.0])
    assert ci is not None
    assert ci.mean == pytest.approx(2.0)
    assert ci.half_width == pytest.approx(4.302653 / 3**0.5, rel=1e-5)  # t(0.975, 2) · s / √n
    one = interval([5.0])
    assert one is not None and one.half_width is None
    assert interval([]) is None


def test_a_difference_is_paired_by_seed() -> None:
    v = Variant((), load_policy(None))
    base = VariantOutcome(v, [{"goodput": 0.5}, {"goodput": 0.7}, {"goodput": 0.9}])
    better = VariantOutcome(v, [{"goodput": 0.51}, {"goodput": 0.71}, {"goodput": 0.91}])
    ci = better.versus(base, "goodput")
    assert ci is not None
    assert ci.mean == pytest.approx(0.01)
    assert ci.half_width == pytest.approx(0.0, abs=1e-9)  # the seeds' spread cancels out
