"""Every truth check passes or says "insufficient data" on fleets and seeds no other test uses.

Hypothesis draws the fleet's shape (clusters, sizes, fabrics, racks and domains, install history),
its failure rate, whether jobs share one pace, the run's length and the seed; the simulator runs it
(fast-forward, Delta sink) and every analytics job is scored against the truth it wrote. A "no" is
a wrong answer from a job or a check that claims more than its data support. More examples than
the default: ``FLEETPULSE_TRUTH_EXAMPLES=40``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from analytics.jobs import run_job
from analytics.jobs.cli import JOB_NAMES
from analytics.jobs.errors import JobError
from analytics.jobs.truth import truth_checks
from fleetpulse.cli import app
from producers.config import LLAMA3_RATE_PER_GPU_DAY

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("FLEETPULSE_TRUTH_EXAMPLES", "4"))
CLUSTER = '[[clusters]]\nname = "c{i}"\nfabric = "{fabric}"\nhosts = {hosts}\n'


@st.composite
def fleets(draw: st.DrawFn) -> str:
    n = draw(st.integers(1, 3))
    fabrics = draw(st.lists(st.sampled_from(["roce", "infiniband"]), min_size=n, max_size=n))
    hosts = draw(st.lists(st.integers(8, 64), min_size=n, max_size=n))
    clusters = "\n".join(
        CLUSTER.format(i=i, fabric=f, hosts=h) for i, (f, h) in enumerate(zip(fabrics, hosts, strict=True))
    )
    one_pace = draw(st.booleans())
    jobs = "[jobs]\npace = [1.0, 1.0]\nbw_pace = [1.0, 1.0]\nidle_hours = 0\n" if one_pace else ""
    return f"""name = "property"
hosts_per_rack = {draw(st.integers(1, 4))}
racks_per_domain = {draw(st.integers(2, 6))}

{clusters}
[install]
history_days = {draw(st.sampled_from([60, 180, 360]))}
cohorts_per_cluster = {draw(st.integers(1, 6))}
arriving_fraction = {draw(st.sampled_from([0.0, 0.1, 0.25, 0.5]))}

[failures]
interruptions_per_gpu_day = {LLAMA3_RATE_PER_GPU_DAY * draw(st.sampled_from([1, 3, 10, 30]))}

{jobs}"""


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    phases=[Phase.generate],
    suppress_health_check=[HealthCheck.too_slow],
)
@given(fleet=fleets(), days=st.sampled_from([30, 60, 90]), seed=st.integers(10_000, 2**31 - 1))
def test_every_truth_check_passes_or_says_insufficient_data(fleet: str, days: int, seed: int) -> None:
    with tempfile.TemporaryDirectory(prefix="truth-property-") as tmp:
        root = Path(tmp)
        (root / "fleet.toml").write_text(fleet)
        lake, truth = root / "lake", root / "truth"
        args = [
            "simulate",
            "--fleet-config",
            str(root / "fleet.toml"),
            "--mode",
            "fast-forward",
            "--days",
            str(days),
            "--seed",
            str(seed),
            "--interval",
            "21600",
            "--sink",
            "parquet",
            "--out",
            str(lake),
            "--truth-out",
            str(truth),
            "--no-progress",
        ]
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0, res.output
        results = {}
        for name in JOB_NAMES:
            try:
                results[name] = run_job(name, lake, truth)
            except JobError:
                continue  # a job the data cannot feed (no incidents) has no checks
        checks = truth_checks(results, truth)
        assert checks.height > 0
        assert checks.filter(pl.col("ok").is_null() & (pl.col("detail") == "")).is_empty()  # no blank verdict
        # the slow-host check says no when the batch view misses hosts it cannot judge (in jobs of fewer
        # than min_job_peers hosts); on any fleet it must still flag no healthy host
        slow = checks.filter(pl.col("check").str.starts_with("slow hosts"))
        for row in slow.filter(pl.col("ok").not_()).to_dicts():
            assert "; 0 healthy flagged" in row["detail"], row
        wrong = checks.filter(pl.col("ok").not_() & ~pl.col("check").str.starts_with("slow hosts"))
        assert wrong.is_empty(), f"seed {seed}, {days} days, fleet:\n{fleet}\n{wrong.to_dicts()}"
