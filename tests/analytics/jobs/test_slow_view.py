"""The batch slow-host view runs the streaming detector's peer test: same peers, windows, thresholds."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import polars as pl

from analytics.jobs import slow_view
from analytics.jobs.slow_view import degraded_expr
from ground.degraded import DEGRADED, AnyBit, BelowMax, DegradedRule, PortDrop, sample_degraded
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


def _degraded_both_ways(
    records: list[dict[str, Any]], rule: DegradedRule = DEGRADED
) -> tuple[list[bool], list[bool]]:
    """The rule's column form over a frame of the payloads, and its per-record form over each payload."""
    frame = pl.DataFrame(
        {"gpus": [r["gpus"] for r in records], "nics": [r["nics"] for r in records]},
        schema={"gpus": pl.List(pl.Struct(GPU_FIELDS)), "nics": pl.List(pl.Struct(NIC_FIELDS))},
    )
    columns = frame.select(degraded_expr(frame.columns, rule))["degraded"].to_list()
    return columns, [sample_degraded(r["gpus"], r["nics"], rule) for r in records]


def test_the_one_degraded_rule_reads_a_sample_alike_record_by_record_and_by_column() -> None:
    """``DEGRADED``, case by case: its column form (``degraded_expr``) over lake columns is its per-record
    form (``sample_degraded``) over a payload, and both are what the table says."""
    cases = {
        "healthy": {},
        "gen": {"pcie_link_gen": 4},
        "width": {"pcie_link_width": 8},
        "thermal": {"throttle_reasons": 0x40},
        "idle": {"throttle_reasons": 0x1},
    }
    records = []
    for name, change in cases.items():
        r = f.sample(host=name)
        r["payload"]["gpus"][2] |= change
        records.append(r)
    nic = f.sample(host="nic")
    nic["payload"]["nics"] = [
        {**nic["payload"]["nics"][0], "port": p, "rx_gbps": 0.9 if p == 5 else 1.0} for p in range(8)
    ]
    records.append(nic)
    frame = pl.DataFrame(
        {
            "host_id": [r["host_id"] for r in records],
            "gpus": [r["payload"]["gpus"] for r in records],
            "nics": [r["payload"]["nics"] for r in records],
        }
    )
    batch = dict(zip(frame["host_id"], frame.select(degraded_expr(frame.columns))["degraded"], strict=True))
    stream = {r["host_id"]: sample_degraded(r["payload"]["gpus"], r["payload"]["nics"]) for r in records}
    assert (
        batch
        == stream
        == {"healthy": False, "gen": True, "width": True, "thermal": True, "idle": False, "nic": True}
    )


GPU_FIELDS = {
    "pcie_link_gen": pl.Int64,
    "pcie_link_gen_max": pl.Int64,
    "pcie_link_width": pl.Int64,
    "pcie_link_width_max": pl.Int64,
    "throttle_reasons": pl.Int64,
}
NIC_FIELDS = {"rx_gbps": pl.Float64}
# another rule of the same shape: one link test, another throttle bit, a larger drop over at least 3 ports
OTHER = DegradedRule(
    below_max=(BelowMax("pcie_link_width", "pcie_link_width_max"),),
    bits=(AnyBit("throttle_reasons", 0x4),),
    port=PortDrop("rx_gbps", 0.2, min_ports=3),
)


def _payloads(n: int, seed: int) -> list[dict[str, Any]]:
    """Payloads with missing fields, empty lists, near-bound NIC ports and stray throttle bits."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        gpus = [
            {
                "pcie_link_gen": rng.choice([None, 3, 4, 5]),
                "pcie_link_gen_max": rng.choice([None, 4, 5, 5, 5]),
                "pcie_link_width": rng.choice([None, 8, 16, 16]),
                "pcie_link_width_max": rng.choice([None, 16, 16]),
                "throttle_reasons": rng.choice([None, 0, 0, 0x1, 0x4, 0x20, 0x40, 0x24]),
            }
            for _ in range(rng.randrange(3))
        ]
        base = rng.choice([0.0, 1.0, 100.0])
        nics = [
            {"rx_gbps": rng.choice([None, base, base, base * rng.choice([0.5, 0.7, 0.85, 0.94, 0.95, 0.96])])}
            for _ in range(rng.randrange(6))
        ]
        out.append({"gpus": gpus, "nics": nics})
    return out


def test_both_forms_of_the_degraded_rule_are_read_off_its_one_table() -> None:
    """On random payloads, the column and the per-record forms agree for ``DEGRADED`` and for another table:
    neither form holds a field or a bound of its own."""
    payloads = _payloads(600, seed=3)
    columns, records = _degraded_both_ways(payloads)
    assert columns == records and 0 < sum(records) < len(records)
    other_columns, other_records = _degraded_both_ways(payloads, OTHER)
    assert other_columns == other_records and other_records != records
