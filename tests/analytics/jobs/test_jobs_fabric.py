"""Fabric A/B building blocks on small frames with known answers."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from analytics.jobs import fabric, slow_view
from analytics.jobs.source import step_time
from ground.slow_peers import PeerRule
from schemas.events import job_step_time

HOUR = 3_600_000


def _inventory() -> pl.LazyFrame:
    return pl.LazyFrame(
        {
            "host_id": ["a1", "a2", "b1", "b2"],
            "fabric": ["roce", "roce", "infiniband", "infiniband"],
            "install_ts": [0, 0, 0, 50 * 86_400_000],
        }
    )


def test_percentiles_per_fabric() -> None:
    samples = pl.LazyFrame(
        {
            "host_id": ["a1"] * 100 + ["b1"] * 100,
            "ts": list(range(200)),
            "step_time_ms": [float(i) for i in range(1, 101)] + [5.0] * 100,
            "bus_bw_gbps": 1.0,
        }
    )
    got = {r["fabric"]: r for r in fabric.sample_percentiles(samples, _inventory()).collect().to_dicts()}
    assert got["roce"]["step_time_ms_p50"] == pytest.approx(50.5)
    assert got["roce"]["step_time_ms_p99"] == pytest.approx(99.01)
    assert got["infiniband"]["step_time_ms_p90"] == 5.0 and got["roce"]["samples"] == 100


def test_percentiles_count_distinct_hosts_whether_fabric_is_joined_or_carried() -> None:
    samples = pl.LazyFrame(
        {"host_id": ["a1", "a2", "a2", "b2"], "step_time_ms": [1.0, 2.0, 3.0, 4.0], "bus_bw_gbps": 1.0}
    )
    joined = fabric.sample_percentiles(samples, _inventory()).collect()
    carried = fabric.sample_percentiles(fabric.with_fabric(samples, _inventory()), None).collect()
    for out in (joined, carried):
        assert out.schema["fabric"] == pl.String
        assert out.select("fabric", "samples", "hosts").rows() == [("infiniband", 1, 1), ("roce", 3, 2)]


def test_slow_host_found_against_its_job_peers() -> None:
    rng = np.random.default_rng(0)
    hosts = [f"h{i}" for i in range(10)]
    rows = []
    for w in range(12):
        for h in hosts:
            base = 1100.0 if h == "h3" and w % 2 == 0 else 1000.0  # intermittent: every other window
            rows += [(h, "c", w * HOUR + k, base * (1 + rng.normal(0, 0.005)), 360.0, "j") for k in range(5)]
    samples = pl.LazyFrame(
        rows, schema=["host_id", "cluster", "ts", "step_time_ms", "bus_bw_gbps", "job_id"], orient="row"
    )
    rule = PeerRule(window=HOUR, min_slowdown=0.05)
    flags = slow_view.slow_hosts(slow_view.slow_windows(samples, rule), rule).collect()
    assert flags.filter(pl.col("is_slow"))["host_id"].to_list() == ["h3"]
    assert flags.filter(pl.col("host_id") == "h3")["slow_windows"].item() == 6


def test_link_rates_count_flaps_by_count_and_include_quiet_hosts() -> None:
    link = pl.LazyFrame({"host_id": ["a1", "a1", "b1"], "kind": ["down", "flap", "flap"], "count": [1, 4, 1]})
    per_host = fabric.link_error_rates(link, fabric.host_days(_inventory(), 0, 100 * 86_400_000))
    pooled = {r["fabric"]: r for r in fabric.link_rates_by_fabric(per_host).collect().to_dicts()}
    assert pooled["roce"]["host_days"] == 200 and pooled["roce"]["flaps"] == 4
    assert pooled["infiniband"]["host_days"] == 150  # b2 installed on day 50
    assert pooled["roce"]["downs_per_host_day"] == pytest.approx(1 / 200)


def test_repair_episodes_run_from_first_action_to_returned() -> None:
    acts = pl.LazyFrame(
        {
            "host_id": ["a1"] * 6 + ["b1"],
            "ts": [0, HOUR, 5 * HOUR, 10 * HOUR, 11 * HOUR, 12 * HOUR, 0],
            "kind": ["drain_requested", "drained", "repaired", "returned", "suspected", "drained", "drained"],
            "operation": ["drain", "drain", "rma", "rma", "reboot", "reboot", "drain"],
        }
    )
    ep = fabric.repair_episodes(acts).collect()
    assert ep.height == 1  # a1's second episode and b1's are still open
    assert ep["hours"].item() == 10.0 and ep["operation"].item() == "rma"


def test_slow_incidence_per_thousand() -> None:
    flags = pl.LazyFrame({"host_id": ["a1", "b1"], "is_slow": [True, False]})
    got = fabric.slow_incidence(flags, _inventory()).collect().sort("fabric")
    assert got["slow_per_1000_hosts"].to_list() == [0.0, 500.0]


def test_samples_without_a_job_have_no_step_time() -> None:
    """HostSampled v2 writes null for a host no job reports from, v1 wrote 0: neither pulls step time down."""
    samples = pl.LazyFrame(
        {
            "host_id": ["a1"] * 4 + ["a2"] * 2,
            "cluster": "c",
            "ts": [0, 1, 2, 3, 0, HOUR],
            "step_time_ms": [10.0, None, 0.0, 20.0, None, 0.0],
            "bus_bw_gbps": 1.0,
        }
    )
    got = fabric.sample_percentiles(samples, _inventory()).collect().to_dicts()[0]
    assert got["samples"] == 6 and got["step_time_ms_p50"] == 15.0 and got["step_time_ms_mean"] == 15.0
    medians = {
        r["host_id"]: r["step_time_ms"]
        for r in fabric.host_medians(samples, _inventory()).collect().to_dicts()
    }
    assert medians == {"a1": 15.0, "a2": None}
    windows = slow_view.host_windows(samples, HOUR).collect()
    assert windows.select("host_id", "step_ms").rows() == [("a1", 15.0)]  # a2 had no comparable window


def test_the_column_rule_for_no_job_is_the_schema_rule() -> None:
    steps = [None, 0.0, -3.0, 0.5, 812.0]
    got = pl.DataFrame({"step_time_ms": steps}).select(step_time())["step_time_ms"].to_list()
    assert got == [job_step_time(s) for s in steps]


def test_a_slow_host_is_the_detectors_evidence_not_a_count_of_windows() -> None:
    """Two slow windows in a row reach the CUSUM's threshold; two a day apart decay in between (a k-of-all
    count with a share of 10 % flagged both), and an absence of n windows starts the evidence afresh."""
    rule = PeerRule(window=HOUR)
    slow_at = {"adjacent": {3, 4}, "apart": {3, 19}, "away": {3, 3 + rule.n}}
    rows = [
        (host, w * HOUR, HOUR, w in slow, 0.0)
        for host, slow in slow_at.items()
        for w in range(20)
        if not (host == "away" and 3 < w < 3 + rule.n)
    ]
    windows = pl.LazyFrame(rows, schema=["host_id", "window", "length", "slow", "excess"], orient="row")
    flags = slow_view.slow_hosts(windows, rule).collect()
    assert flags.filter(pl.col("is_slow"))["host_id"].to_list() == ["adjacent"]
    assert flags.filter(pl.col("host_id") == "apart")["slow_windows"].item() == 2
    assert flags.filter(pl.col("host_id") == "adjacent")["evidence_nats"].item() == rule.evidence
