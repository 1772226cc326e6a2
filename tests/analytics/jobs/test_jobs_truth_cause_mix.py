"""The cause-mix truth check: χ² where its law holds, a drawn law where cells are small, no verdict on a handful."""

from __future__ import annotations

import polars as pl

from analytics.jobs.result import JobResult
from analytics.jobs.truth import cause_mix_check

MIX = {"gpu": 0.6, "network": 0.3, "psu": 0.1}


def _check(counts: dict[str, int]) -> dict:
    table = pl.DataFrame({"cause": list(counts), "count": list(counts.values())})
    return cause_mix_check(JobResult("interruptions", {"root_causes": table}, {}, []), {"cause_mix": MIX})[0]


def test_large_counts_use_the_chi_square_law() -> None:
    assert _check({"gpu": 600, "network": 300, "psu": 100})["ok"] is True
    wrong = _check({"gpu": 300, "network": 300, "psu": 400})
    assert wrong["ok"] is False and "(χ²)" in wrong["observed"]


def test_small_cells_take_their_p_from_drawn_counts() -> None:
    # 12 interruptions, psu expects 1.2: one psu more than expected is common, not p ≈ 0.03 as χ² would say
    row = _check({"gpu": 7, "network": 2, "psu": 3})
    assert row["ok"] is True and "(Monte Carlo)" in row["observed"]
    assert _check({"gpu": 0, "network": 0, "psu": 12})["ok"] is False


def test_a_handful_of_interruptions_has_no_verdict() -> None:
    row = _check({"gpu": 1, "network": 0, "psu": 2})
    assert row["ok"] is None and "3 interruptions, 10 needed" in row["detail"]
