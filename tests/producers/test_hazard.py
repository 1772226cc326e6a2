import numpy as np
import pytest

from producers import hazard


def test_cumulative_is_the_power_law() -> None:
    assert hazard.cumulative(100.0, 0.7, 100.0) == pytest.approx(1.0)
    assert hazard.cumulative(0.0, 0.7, 100.0) == 0.0
    assert hazard.cumulative(50.0, 0.7, 100.0) == pytest.approx(0.5**0.7)


def test_sample_stays_inside_its_window_and_has_the_expected_count() -> None:
    rng = np.random.default_rng(0)
    counts = []
    for _ in range(4000):
        ages = hazard.sample(rng, 10.0, 40.0, 0.7, 30.0)
        assert ((ages > 10.0) & (ages <= 40.0)).all() and np.all(np.diff(ages) >= 0)
        counts.append(len(ages))
    expected = hazard.cumulative(40.0, 0.7, 30.0) - hazard.cumulative(10.0, 0.7, 30.0)
    assert np.mean(counts) == pytest.approx(expected, rel=0.05)


def test_early_life_is_front_loaded() -> None:
    rng = np.random.default_rng(1)
    ages = np.concatenate([hazard.sample(rng, 0.0, 100.0, 0.7, 50.0) for _ in range(3000)])
    assert (ages < 50).sum() > 1.5 * (ages >= 50).sum()  # (0.5^0.7)/(1-0.5^0.7) = 1.6


def test_calibrate_scale_hits_the_target_count() -> None:
    a0 = np.array([0.0, 100.0, 300.0])
    a1 = a0 + 90
    scale = hazard.calibrate_scale(a0, a1, 0.7, 5.0)
    expected = sum(
        hazard.cumulative(y, 0.7, scale) - hazard.cumulative(x, 0.7, scale)
        for x, y in zip(a0, a1, strict=False)
    )
    assert expected == pytest.approx(5.0)
    with pytest.raises(ValueError):
        hazard.calibrate_scale(a0, a0, 0.7, 5.0)


def test_fit_recovers_shape_and_scale_with_left_truncated_windows() -> None:
    rng = np.random.default_rng(2)
    a0 = rng.uniform(0, 400, size=6000)
    a1 = a0 + rng.uniform(30, 120, size=6000)
    ages = np.concatenate([hazard.sample(rng, x, y, 0.6, 40.0) for x, y in zip(a0, a1, strict=False)])
    fit = hazard.fit(ages, a0, a1)
    assert fit.shape == pytest.approx(0.6, rel=0.05)
    assert fit.scale_days == pytest.approx(40.0, rel=0.15)
    assert fit.n_events == len(ages)


def test_fit_needs_events() -> None:
    with pytest.raises(ValueError):
        hazard.fit(np.array([1.0]), np.array([0.0]), np.array([2.0]))
