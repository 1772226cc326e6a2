"""Samples folded as column batches give what folding them record by record gave: the same messages, in the
same order, the same late rows and the same partition state, however a history is cut into batches.

The record-by-record fold as it was before batches (``HostStage.add_sample`` and ``SampleFolder.fold`` over
one decoded record) is kept here as the reference.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from ground.degraded import sample_degraded
from ground.slow_peers import window_bounds
from schemas.events import job_step_time
from streams.core.peers.messages import ClusterItem, HostSummary
from streams.core.peers.state import HostWindows, Window
from streams.core.policy import Policy, load_policy
from streams.core.samples.checkpoint import PartitionState
from streams.core.samples.columns import SampleColumns
from streams.core.samples.folder import FetchedBatch, SampleFolder, capped
from streams.testing import START_TS
from tests.streams import factories as f

MINUTE = 60_000


def reference_add_sample(
    policy: Policy, store: dict[str, HostWindows], record: dict[str, Any]
) -> tuple[list[HostSummary], bool]:
    """The per-record host-window fold before column batches (``HostStage.add_sample``)."""
    p = record["payload"]
    host = record["host_id"]
    step = job_step_time(p.get("step_time_ms"))
    if p.get("job_id") is None or step is None:
        return [], False
    state = store.get(host) or HostWindows()
    start, end = window_bounds(record["ts"], p["interval_s"], policy.slow_host.window)
    closed = state.closed
    if closed is not None and end <= closed:
        return [], True
    windows = dict(state.w)
    key = str(start)
    acc = windows.get(key)
    deg = dict(state.deg)
    if sample_degraded(p.get("gpus") or (), p.get("nics") or ()):
        deg[key] = deg.get(key, 0) + 1
    if acc is None:
        windows[key] = Window(step, p["bus_bw_gbps"], 1, end, p["job_id"])
    else:
        windows[key] = Window(acc.step_ms + step, acc.bus_bw + p["bus_bw_gbps"], acc.n + 1, end, p["job_id"])
    wm = record["ts"] if state.wm is None else max(state.wm, record["ts"])
    summaries = []
    for key in sorted(windows, key=int):
        w = windows[key]
        if w.end + policy.slow_host.host_grace <= wm and w.end <= start:
            del windows[key]
            bad = deg.pop(key, 0)
            closed = w.end if closed is None else max(closed, w.end)
            summaries.append(
                HostSummary(
                    host_id=host,
                    cluster=record["cluster"],
                    window_start=int(key),
                    window_end=w.end,
                    step_ms=w.step_ms / w.n,
                    bus_bw=w.bus_bw / w.n,
                    n=w.n,
                    wm=wm,
                    job=w.job,
                    degraded=bad / w.n,
                )
            )
    store[host] = HostWindows(wm, closed, windows, deg)
    return summaries, False


def reference_fold(
    policy: Policy, folder: SampleFolder, state: PartitionState, record: dict[str, Any], now_ms: int | None
) -> tuple[list[ClusterItem], bool]:
    """The per-record ``SampleFolder.fold`` before column batches."""
    out: list[ClusterItem] = []
    late = False
    if record["event_type"] == "HostSampled":
        summaries, late = reference_add_sample(policy, state.hosts, record)
        for summary in summaries:
            out.append(
                msgspec.structs.replace(
                    summary, src=state.partition, nsrc=folder.nsrc, wm=capped(summary.wm, now_ms)
                )
            )
    ts = capped(record["ts"], now_ms)
    if ts <= state.wm:
        return out, late
    state.wm = ts
    interval = record["payload"].get("interval_s", 0) if record["event_type"] == "HostSampled" else 0
    start, _ = window_bounds(ts, interval, folder.window)
    folder.seen_clusters.add(record["cluster"])
    if state.wm_window == start:
        return out, late
    state.wm_window = start
    return out + folder.progress(state), late


def history(seed: int, n: int = 3_000) -> list[dict[str, Any]]:
    """Samples of 24 hosts in 2 clusters: jobs that change, hosts without a job, gaps, records that come late,
    degraded PCIe links and NIC ports, 1- and 5-minute and 6-hour intervals, and a few errors between them."""
    rng = random.Random(seed)
    hosts = [(f"c{c}-h{h:02d}", f"c{c}") for c in range(2) for h in range(12)]
    ts = START_TS
    out = []
    for _ in range(n):
        ts += rng.choice((0, 0, 1_000, 7_000, 20_000, MINUTE))
        host, cluster = rng.choice(hosts)
        at = ts - rng.choice((0,) * 12 + (7 * MINUTE, 30 * MINUTE))  # now and then a record comes late
        if rng.random() < 0.03:
            out.append(f.xid(79, host=host, cluster=cluster, ts=at))
            continue
        job = rng.choice(("j1", "j1", "j2", None))
        step = (
            rng.choice((1000.0 + rng.random() * 50, None, 0.0)) if job is None else 900.0 + rng.random() * 300
        )
        record = f.sample(
            step,
            300.0 + rng.random() * 80,
            interval_s=rng.choice((60, 60, 300, 21_600)),
            job=job,
            host=host,
            cluster=cluster,
            ts=at,
        )
        gpus, nics = record["payload"]["gpus"], record["payload"]["nics"]
        if rng.random() < 0.1:
            gpus[rng.randrange(8)]["pcie_link_width"] = 8
        if rng.random() < 0.1:
            nics[:] = [
                dict(nics[0], port=p, rx_gbps=50.0 if p == 3 and rng.random() < 0.5 else 100.0)
                for p in range(4)
            ]
        out.append(record)
    return out


def batches(records: list[dict[str, Any]], seed: int) -> list[list[dict[str, Any]]]:
    rng = random.Random(seed)
    out, i = [], 0
    while i < len(records):
        size = rng.choice((1, 2, 7, 200, 2_000))
        out.append(records[i : i + size])
        i += size
    return out


@pytest.mark.parametrize(("seed", "now_ms"), [(1, None), (2, START_TS + 3 * 3_600_000)])
def test_folding_column_batches_gives_what_folding_record_by_record_gave(
    seed: int, now_ms: int | None
) -> None:
    policy = load_policy()
    records = history(seed)
    ref_folder, ref_state = SampleFolder(policy, 4, lambda: ["c0", "c1", "c9"]), PartitionState(2)
    expected: dict[str, list[ClusterItem]] = {}
    expected_late = 0
    for record in records:
        out, late = reference_fold(policy, ref_folder, ref_state, record, now_ms)
        expected_late += late
        for msg in out:
            expected.setdefault(msg.cluster, []).append(msg)

    folder, state = SampleFolder(policy, 4, lambda: ["c0", "c1", "c9"]), PartitionState(2)
    got: dict[str, list[ClusterItem]] = {}
    got_late = 0
    for part in batches(records, seed):
        batch = FetchedBatch(folder, state, now_ms)
        for record in part:
            batch.add(record)
        batch.fold()
        got_late += batch.late
        for cluster, items in batch.bundles.items():
            got.setdefault(cluster, []).extend(items)

    summaries = [m for items in expected.values() for m in items if isinstance(m, HostSummary)]
    assert len(summaries) > 100 and expected_late > 10  # the history closes windows and has late samples
    assert any(m.degraded > 0 for m in summaries) and {m.job for m in summaries} >= {"j1", "j2"}
    assert got == expected
    assert got_late == expected_late
    assert (state.hosts, state.wm, state.wm_window) == (ref_state.hosts, ref_state.wm, ref_state.wm_window)
    assert folder.seen_clusters == ref_folder.seen_clusters


def test_columns_of_records_read_what_the_windows_need() -> None:
    records = [f.sample(None, job=None), f.sample(0.0, job="j1"), f.sample(1200.0, 300.0, interval_s=300)]
    records[2]["payload"]["gpus"][0]["throttle_reasons"] = 0x40
    cols = SampleColumns.of_records(records)
    assert len(cols) == 3
    assert list(cols.step_ms) == [None, None, 1200.0] and list(cols.job_id) == [None, "j1", "j1"]
    assert list(cols.degraded) == [False, False, True] and list(cols.interval_s) == [60, 60, 300]
