"""The batch slow-host view: the streaming detector's peer test (``ground.slow_peers``) and its evidence
(``ground.slow_evidence``) over a whole history.

Windows, peers and thresholds are the detector's: each host's samples fold into the detector's
event-time windows (mean step time and bus bandwidth, the window's last job, as
``streams.core.samples.windows.HostStage`` does), every closed window of a cluster is judged by
``judge_window``, relative to the host's own job, and a host is slow when the detector's CUSUM over its
windows reaches the finding's threshold. Where the batch differs (it answers once for the whole period,
with no episodes), docs/ANALYTICS.md says why.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from analytics.jobs.source import step_time
from ground.degraded import DEGRADED, DegradedRule
from ground.slow_evidence import evidence_since
from ground.slow_peers import Member, PeerRule, judge_window, window_bounds

DEFAULT_RULE = PeerRule()
WINDOW_SCHEMA = {
    "cluster": pl.String,
    "window": pl.Int64,
    "length": pl.Int64,
    "host_id": pl.String,
    "job_id": pl.String,
    "step_ms": pl.Float64,
    "z_step": pl.Float64,
    "z_bus_bw": pl.Float64,
    "excess": pl.Float64,
    "slow": pl.Boolean,
    "reference": pl.String,
    "degraded": pl.Float64,
}


def degraded_expr(names: Sequence[str], rule: DegradedRule = DEGRADED) -> pl.Expr:
    """``ground.degraded.sample_degraded`` over the lake's HostSampled columns (``gpus``, ``nics`` list-of-struct
    columns; a table without them has no evidence): the column form of the same ``rule``, built from its
    fields and bounds, test by test."""
    out = pl.lit(False)
    if "gpus" in names:
        f = pl.element().struct.field
        gpu = pl.lit(False)
        for b in rule.below_max:
            gpu = gpu | (f(b.field) < f(b.limit)).fill_null(False)
        for m in rule.bits:
            gpu = gpu | ((f(m.field).cast(pl.Int64) & m.mask) != 0).fill_null(False)
        out = out | pl.col("gpus").list.eval(gpu).list.any().fill_null(False)
    if "nics" in names:
        port = rule.port
        values = pl.col("nics").list.eval(pl.element().struct.field(port.field).cast(pl.Float64).drop_nulls())
        med = values.list.median()
        low = values.list.min() < (1 - port.drop) * med
        out = out | ((values.list.len() >= max(port.min_ports, 1)) & (med > 0) & low).fill_null(False)
    return out.alias("degraded")


def host_windows(samples: pl.LazyFrame, window_ms: int) -> pl.LazyFrame:
    """Per cluster, host and detector window: mean step time, mean bus bandwidth, the window's last job and
    the share of its samples with degraded job-independent telemetry (``degraded_expr``).

    A window lasts ``window_ms`` or the sample interval when samples are longer (``window_bounds``).
    Samples without a job (no step time) make no window: there is nothing to compare.
    """
    names = samples.collect_schema().names()
    interval = pl.col("interval_s").cast(pl.Int64) if "interval_s" in names else pl.lit(0, pl.Int64)
    start, end = window_bounds(pl.col("ts"), interval, pl.lit(window_ms, pl.Int64), pl.max_horizontal)
    job = pl.col("job_id").cast(pl.String) if "job_id" in names else pl.lit(None, pl.String).alias("job_id")
    bw = (
        pl.col("bus_bw_gbps").cast(pl.Float64) if "bus_bw_gbps" in names else pl.lit(1.0).alias("bus_bw_gbps")
    )
    return (
        samples.select(
            "host_id",
            "cluster",
            "ts",
            step_time().cast(pl.Float64),
            bw,
            job,
            (end - start).alias("length"),
            start.alias("window"),
            degraded_expr(names),
        )
        .drop_nulls("step_time_ms")
        .sort("ts")
        .group_by("cluster", "window", "host_id")
        .agg(
            pl.col("step_time_ms").mean().alias("step_ms"),
            pl.col("bus_bw_gbps").mean().alias("bus_bw"),
            pl.col("job_id").last(),
            pl.col("degraded").cast(pl.Float64).mean(),
            pl.col("length").max(),
        )
        .sort("cluster", "window", "host_id")
    )


def slow_windows(samples: pl.LazyFrame, rule: PeerRule | None = None) -> pl.LazyFrame:
    """Per judged host and window: its robust z against its job's peers, its excess, and whether it is slow.

    Peers are the detector's (``judge_window``): the host's job, or in a job of 2-3 hosts its best other
    host; a host alone in its job is judged by its job-independent telemetry (``reference`` says which).
    """
    rule = rule or DEFAULT_RULE
    frame = host_windows(samples, rule.window).collect(engine="streaming")
    rows: list[tuple[object, ...]] = []
    cols = [
        frame[c].to_list()
        for c in ("cluster", "window", "host_id", "step_ms", "bus_bw", "job_id", "degraded", "length")
    ]
    i, n = 0, frame.height
    while i < n:
        j = i
        while j < n and cols[0][j] == cols[0][i] and cols[1][j] == cols[1][i]:
            j += 1
        members: dict[str, Member] = {cols[2][r]: (cols[3][r], cols[4][r], cols[5][r]) for r in range(i, j)}
        degraded = {cols[2][r]: cols[6][r] for r in range(i, j)}
        lengths = {cols[2][r]: cols[7][r] for r in range(i, j)}
        for v in judge_window(members, rule, degraded):
            job = members[v.host_id][2]
            rows.append(
                (
                    cols[0][i],
                    cols[1][i],
                    lengths[v.host_id],
                    v.host_id,
                    job,
                    v.step_ms,
                    v.z_step,
                    v.z_bus_bw,
                    v.excess,
                    v.slow,
                    v.reference,
                    v.degraded,
                )
            )
        i = j
    return pl.DataFrame(rows, schema=WINDOW_SCHEMA, orient="row").lazy()


def slow_hosts(windows: pl.LazyFrame, rule: PeerRule | None = None) -> pl.LazyFrame:
    """Per host: windows judged, slow windows, median excess, its peak evidence in nats and whether it is slow.

    The evidence is the detector's CUSUM (``PeerRule.sequential``) over the host's windows in time order,
    started afresh after the host was away ``n`` windows (``ground.slow_evidence.evidence_since``, as
    ``streams.core.peers.scores.update_history`` does); a host is slow when it reaches the threshold, i.e. the detector would have raised a finding.
    """
    rule = rule or DEFAULT_RULE
    frame = (
        windows.select("host_id", "window", "length", "slow", "excess").collect().sort("host_id", "window")
    )
    test = rule.sequential
    peaks: dict[str, float] = {}
    last: tuple[str, int] | None = None
    s = 0.0
    for host, start, length, slow in zip(
        frame["host_id"], frame["window"], frame["length"], frame["slow"], strict=True
    ):
        if last is None or last[0] != host or last[1] < evidence_since(start, length, rule.n):
            s = 0.0  # a new host, or back after an absence: its evidence forgotten
        s = min(test.step(s, bool(slow)), test.h)
        peaks[host] = max(peaks.get(host, 0.0), s)
        last = (host, start)
    evidence = pl.DataFrame(
        {"host_id": list(peaks), "evidence_nats": list(peaks.values())},
        schema={"host_id": pl.String, "evidence_nats": pl.Float64},
    )
    return (
        frame.lazy()
        .group_by("host_id")
        .agg(
            pl.len().alias("windows"),
            pl.col("slow").sum().alias("slow_windows"),
            pl.col("excess").median().alias("median_excess"),
        )
        .join(evidence.lazy(), on="host_id", how="left")
        .with_columns((pl.col("evidence_nats") >= test.h).alias("is_slow"))
    )
