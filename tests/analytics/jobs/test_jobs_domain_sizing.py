"""The maintenance-domain cost model: U shape, closed-form optimum, sensitivity."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analytics.jobs.domain_sizing import DomainModel, cost_components, cost_curve, optimum, sensitivity

META = DomainModel(hosts=3072, failure_rate=1.35e-4, repair_hours=24.0, job_hosts=1024)


def test_cost_is_u_shaped() -> None:
    best = optimum(META)
    ends = cost_components(META, np.array([1, META.hosts]))["total"]
    assert 1 < best.size < META.hosts
    assert best.cost_hosts < ends.min()
    curve = cost_curve(META)
    totals = curve["total"].to_numpy()
    i = int(np.argmin(totals))
    assert np.all(np.diff(totals[: i + 1]) <= 1e-9) and np.all(np.diff(totals[i:]) >= -1e-9)


def test_optimum_matches_the_closed_form_without_planned_visits() -> None:
    # With T off and J = H the interruption cost is A/(1 + kD), A = H·λ·ρ·H, k = λR, so D* = (√(Ak) − 1)/k.
    m = DomainModel(hosts=4000, failure_rate=2e-4, repair_hours=24.0, job_hosts=4000, cycle_hours=None)
    a, k = m.hosts * m.failure_rate * m.restart_hours * m.hosts, m.failure_rate * m.repair_hours
    assert optimum(m).size == pytest.approx((math.sqrt(a * k) - 1) / k, abs=1)


def test_buffer_and_interruption_move_in_opposite_directions() -> None:
    c = cost_components(META, np.array([4, 64, 1024]))
    assert list(c["buffer"]) == [4, 64, 1024]
    assert c["drains_per_day"][0] > c["drains_per_day"][1] > c["drains_per_day"][2]


def test_sensitivity_grid() -> None:
    s = sensitivity(META)
    assert s.height == 9
    base = s.filter((s["failure_rate_factor"] == 1.0) & (s["repair_time_factor"] == 1.0))
    assert base["regret_pct"].item() == pytest.approx(0.0)
    assert (s["regret_pct"] >= -1e-9).all()
    hi = s.filter((s["failure_rate_factor"] == 1.5) & (s["repair_time_factor"] == 1.0))[
        "optimal_domain_hosts"
    ]
    assert hi.item() > base["optimal_domain_hosts"].item()  # more failures: batch more per drain
