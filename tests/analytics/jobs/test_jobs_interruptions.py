"""Root-cause table and MTTF vs job size."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from analytics.jobs import interruptions as it

HOUR = 3_600_000


def test_root_cause_table_shares_and_reference() -> None:
    inter = pl.LazyFrame({"cause": ["faulty_gpu"] * 6 + ["hbm3"] * 3 + ["software"]})
    t = it.root_cause_table(inter).collect()
    assert t["cause"].to_list()[:3] == ["faulty_gpu", "hbm3", "software"]
    assert t["pct"].to_list()[:3] == pytest.approx([60.0, 30.0, 10.0])
    assert t.filter(pl.col("cause") == "psu")["count"].item() == 0  # causes never seen are listed with 0
    assert t["llama3_pct"].sum() == pytest.approx(92.4)  # the 13 causes listed cover 92.4 % of Table 5


def test_repeats_of_one_host_and_cause_count_once_in_the_population_view() -> None:
    inter = pl.LazyFrame(
        {
            "host_id": ["lemon"] * 5 + ["a", "b", "lemon"],
            "cause": ["gpu_sram"] * 5 + ["gpu_sram", "hbm3", "hbm3"],
            "ts": [50, 10, 40, 30, 20, 5, 6, 7],
        }
    )
    kept = it.without_repeats(inter).collect().sort("host_id", "cause")
    assert kept.rows() == [
        ("a", "gpu_sram", 5),
        ("b", "hbm3", 6),
        ("lemon", "gpu_sram", 10),
        ("lemon", "hbm3", 7),
    ]
    table = it.root_cause_table(it.without_repeats(inter)).collect()
    assert table.filter(pl.col("cause") == "gpu_sram")["count"].item() == 2  # not 6


def test_mttf_falls_as_one_over_size() -> None:
    rng = np.random.default_rng(0)
    rate_per_gpu_hour = 1e-4
    sizes = [8, 16, 64, 256, 1024]
    sample_rows, inter_rows = [], []
    for j, n in enumerate(sizes * 4):
        job, hours = f"j{j}", 2000.0
        sample_rows += [(f"h{j}-{k}", job, t) for k in range(max(1, n // 8)) for t in (0, int(hours * HOUR))]
        for _ in range(rng.poisson(rate_per_gpu_hour * n * hours)):
            inter_rows.append((job, n))
    samples = pl.LazyFrame(sample_rows, schema=["host_id", "job_id", "ts"], orient="row")
    inter = pl.LazyFrame(inter_rows, schema=["job_id", "job_gpus"], orient="row")
    by_size = it.mttf_by_size(it.job_runs(samples, inter)).collect()
    assert by_size["size_gpus"].to_list() == sizes
    big = by_size.filter(pl.col("size_gpus") == 1024)
    assert big["mttf_hours"].item() == pytest.approx(1 / (rate_per_gpu_hour * 1024), rel=0.15)
    slope = it.size_slope(by_size)
    assert slope.slope == pytest.approx(-1.0, abs=0.1)


def test_projection_is_inverse_in_size() -> None:
    p = it.projected_mttf(1e-5, sizes=(8, 16))
    assert p["projected_mttf_hours"].to_list() == pytest.approx([12500.0, 6250.0])
    assert p["meta_mttf_hours"].to_list()[0] == pytest.approx(47.7 * 24)
