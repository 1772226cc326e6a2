"""The batch slow-host view runs the streaming detector's peer test: same peers, windows, thresholds."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import polars as pl

from analytics.jobs import slow_view
from ground.slow_peers import PeerRule
from streams.core.peers.stage import ClusterStage
from streams.core.policy import SlowHostPolicy, load_policy
from streams.core.samples.windows import HostStage
from streams.testing import START_TS
from tests.streams import factories as f

MIN = 60_000
# one cluster, jobs at the simulator's pace spread (×0.6 to ×1.8), a pair and a host alone in its job
JOBS = {"fast": (12, 0.6), "mid": (10, 1.0), "slow-paced": (9, 1.8), "pair": (2, 1.3), "solo": (1, 1.1)}
SLOW = {"pair-1": 1.10, "slow-paced-3": 1.08, "solo-0": 1.05}  # slower than their own job's other hosts
THROTTLED = {"solo-0"}  # alone in its job: found by its thermal throttling


def _fleet(minutes: int = 90, seed: int = 5) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    records = []
    for step in range(0, minutes * 60, 60):
        ts = START_TS + step * 1000
        for job, (size, pace) in JOBS.items():
            for i in range(size):
                host = f"{job}-{i}"
                factor = SLOW.get(host, 1.0)
                record = f.sample(
                    1000.0 * pace * factor * (1 + rng.gauss(0, 0.01)),
                    380.0 / pace * (1 + rng.gauss(0, 0.01)),
                    job=job,
                    host=host,
                    ts=ts,
                )
                if host in THROTTLED:
                    record["payload"]["gpus"][0] |= {"throttle_reasons": 0x20}
                records.append(record)
    return records


def _streamed(records: list[dict[str, Any]], policy: SlowHostPolicy) -> set[tuple[str, int, bool]]:
    hosts, cluster = HostStage(policy), ClusterStage(policy)
    host_store: dict[str, Any] = {}
    cluster_store: dict[str, Any] = {}
    out = set()
    for r in records:
        for s in hosts.add_sample(host_store, r)[0]:
            _, verdicts, _ = cluster.add_summary(cluster_store, msgspec.structs.replace(s, src=0, nsrc=1))
            out |= {(v.host_id, v.window_start, v.slow) for v in verdicts}
    return out


def _frame(records: list[dict[str, Any]]) -> pl.LazyFrame:
    return pl.LazyFrame(
        [
            {
                "host_id": r["host_id"],
                "cluster": r["cluster"],
                "ts": r["ts"],
                **{
                    k: r["payload"][k]
                    for k in ("interval_s", "job_id", "step_time_ms", "bus_bw_gbps", "gpus", "nics")
                },
            }
            for r in records
        ]
    )


def test_batch_verdicts_are_the_detectors_on_a_multi_pace_cluster() -> None:
    records = _fleet()
    policy = load_policy().slow_host
    streamed = _streamed(records, policy)
    batch = slow_view.slow_windows(_frame(records), PeerRule.of(policy)).collect()
    got = set(zip(batch["host_id"], batch["window"], batch["slow"], strict=True))
    # the stream closes the windows its watermark passed: every one of them the batch judged the same
    assert streamed and streamed <= got
    assert {h for h, _, slow in got if slow} == set(SLOW)
    assert set(batch.filter(pl.col("host_id").str.starts_with("solo"))["reference"]) == {"telemetry"}
    flags = slow_view.slow_hosts(batch.lazy(), PeerRule.of(policy)).collect()
    assert sorted(flags.filter(pl.col("is_slow"))["host_id"].to_list()) == sorted(SLOW)


def test_the_shared_defaults_are_the_shipped_policys() -> None:
    assert PeerRule.of(load_policy().slow_host) == PeerRule()
