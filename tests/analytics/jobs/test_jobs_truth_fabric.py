"""The fabric truth check: decided on one pace, undecidable (with why) when jobs run at their own pace."""

from __future__ import annotations

from typing import Any

from analytics.jobs.result import JobResult
from analytics.jobs.truth import fabric_check

COMPARISONS = {
    metric: {
        "group_a": "roce",
        "group_b": "ib",
        "diff": diff,
        "diff_lo": diff - 2,
        "diff_hi": diff + 2,
        "p_value": 0.01,
    }
    for metric, diff in (("step_time_ms", -10.5), ("bus_bw_gbps", 4.8))
}
FABRICS = {
    "roce": {"step_time_ms": 110.0, "bus_bw_gbps": 40.0},
    "ib": {"step_time_ms": 100.0, "bus_bw_gbps": 45.0},
}


def _check(jobs: dict[str, Any]) -> dict[str, Any]:
    manifest = {"fleet": {"fabrics": FABRICS, "jobs": jobs}}
    rows = fabric_check(JobResult("fabric", {}, {"comparisons": COMPARISONS}, []), manifest)
    return {row["check"].split(" (")[0]: row for row in rows}


def test_one_pace_is_decided_against_the_configured_difference() -> None:
    rows = _check({"pace": [1.0, 1.0], "bw_pace": [1.0, 1.0]})
    assert rows["fabric step_time_ms"]["ok"] is True and rows["fabric bus_bw_gbps"]["ok"] is True


def test_jobs_at_their_own_pace_make_the_check_undecidable_with_the_reason() -> None:
    rows = _check({"pace": [0.6, 1.8], "bw_pace": [1.0, 1.0]})
    assert rows["fabric step_time_ms"]["ok"] is None
    assert "own pace" in rows["fabric step_time_ms"]["detail"]
    assert rows["fabric bus_bw_gbps"]["ok"] is True


def test_no_only_outside_the_strict_interval() -> None:
    one_pace = {"pace": [1.0, 1.0], "bw_pace": [1.0, 1.0]}
    # configured −10: the 95 % CI [−9, −5] misses it, the 99.9 % one (±3.4 around −7) does not
    comps = {
        "step_time_ms": {
            "group_a": "roce",
            "group_b": "ib",
            "diff": -7.0,
            "diff_lo": -9.0,
            "diff_hi": -5.0,
            "p_value": 0.01,
        }
    }
    rows = fabric_check(
        JobResult("fabric", {}, {"comparisons": comps}, []), {"fabrics": FABRICS, "jobs": one_pace}
    )
    assert rows[0]["ok"] is None and "inside the 99.9% one" in rows[0]["detail"]
    comps["step_time_ms"] |= {"diff": -2.5, "diff_lo": -4.5, "diff_hi": -0.5}
    rows = fabric_check(
        JobResult("fabric", {}, {"comparisons": comps}, []), {"fabrics": FABRICS, "jobs": one_pace}
    )
    assert rows[0]["ok"] is False and "outside the 99.9% CI" in rows[0]["detail"]
