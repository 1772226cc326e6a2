"""Slow-host detector: per-host window summaries, then peer comparison per cluster per window.

Two stages, both pure functions over a dict-like store (a Faust table in the worker, a plain
dict in tests): ``HostStage`` (keyed by host) folds samples into event-time windows and emits
one summary per closed window; ``ClusterStage`` (keyed by cluster) collects the summaries and,
when a window closes by the cluster's watermark, scores every host against its peers with a
robust z-score; a host slow in k of its last n windows becomes a finding.
"""

from __future__ import annotations

import statistics
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

from streams.findings import Finding
from streams.ids import finding_id
from streams.policy import SlowHostPolicy

MAD_TO_SD = 1.4826
Store = MutableMapping[str, Any]


def window_bounds(ts: int, interval_s: int, window_ms: int) -> tuple[int, int]:
    """The window a sample falls in; a sample longer than the window covers exactly one window."""
    length = max(window_ms, interval_s * 1000)
    start = ts - ts % length
    return start, start + length


def robust_z(values: list[float], min_mad_rel: float) -> tuple[float, float]:
    """(median, scale) with scale = 1.4826 * MAD, floored at min_mad_rel * |median|."""
    med = statistics.median(values)
    mad = statistics.median([abs(v - med) for v in values])
    scale = max(MAD_TO_SD * mad, min_mad_rel * abs(med), 1e-12)
    return med, scale


@dataclass(frozen=True, slots=True)
class Verdict:
    host_id: str
    window_start: int
    window_end: int
    z_step: float
    z_bus_bw: float
    slow: bool
    step_ms: float
    median_step_ms: float


def evaluate_window(
    members: dict[str, tuple[float, float]], window_start: int, window_end: int, policy: SlowHostPolicy
) -> list[Verdict]:
    """Score each host's (step_ms, bus_bw) against its peers; too few peers -> no verdicts."""
    if len(members) < policy.min_peers:
        return []
    steps = [m[0] for m in members.values()]
    bws = [m[1] for m in members.values()]
    med_s, scale_s = robust_z(steps, policy.min_mad_rel)
    med_b, scale_b = robust_z(bws, policy.min_mad_rel)
    out = []
    for host, (step, bw) in sorted(members.items()):
        z_s = (step - med_s) / scale_s
        z_b = (bw - med_b) / scale_b
        slow = z_s >= policy.z_step or -z_b >= policy.z_bus_bw
        out.append(Verdict(host, window_start, window_end, z_s, z_b, slow, step, med_s))
    return out


class HostStage:
    """Per-host event-time windows of step time and bus bandwidth (state key: host_id)."""

    def __init__(self, policy: SlowHostPolicy) -> None:
        self.policy = policy

    def add_sample(self, store: Store, record: dict[str, Any]) -> tuple[list[dict[str, Any]], bool]:
        """Fold one HostSampled record; return (summaries of windows it closed, was_late)."""
        p = record["payload"]
        host = record["host_id"]
        if p.get("job_id") is None or p["step_time_ms"] <= 0:
            return [], False  # no job on the host: nothing to compare
        state = store.get(host) or {"wm": None, "closed": None, "w": {}}
        start, end = window_bounds(record["ts"], p["interval_s"], self.policy.window)
        if state["closed"] is not None and end <= state["closed"]:
            return [], True
        windows = dict(state["w"])
        acc = windows.get(str(start)) or [0.0, 0.0, 0, end]
        windows[str(start)] = [acc[0] + p["step_time_ms"], acc[1] + p["bus_bw_gbps"], acc[2] + 1, end]
        wm = record["ts"] if state["wm"] is None else max(state["wm"], record["ts"])
        summaries = []
        closed = state["closed"]
        for key in sorted(windows, key=int):
            w_end = windows[key][3]
            if w_end + self.policy.host_grace <= wm and w_end <= start:
                s_step, s_bw, n, _ = windows.pop(key)
                closed = w_end if closed is None else max(closed, w_end)
                summaries.append(
                    {
                        "host_id": host,
                        "cluster": record["cluster"],
                        "window_start": int(key),
                        "window_end": w_end,
                        "step_ms": s_step / n,
                        "bus_bw": s_bw / n,
                        "n": n,
                        "wm": wm,
                    }
                )
        store[host] = {"wm": wm, "closed": closed, "w": windows}
        return summaries, False


class ClusterStage:
    """Peer statistics per cluster per window, closed by the cluster's event-time watermark.

    The watermark is the minimum over source partitions of their newest event time, so a
    partition consumed ahead of the others cannot close windows its peers still feed.
    Store keys: ``C|meta`` (per-partition watermarks, closed-up-to, open windows), ``C|roster`` (hosts seen),
    ``C|<window_start>|<host>`` (one summary) and ``C|h|<host>`` (the host's last n verdicts).
    """

    def __init__(self, policy: SlowHostPolicy) -> None:
        self.policy = policy

    def add_summary(self, store: Store, summary: dict[str, Any]) -> tuple[list[Finding], list[Verdict], bool]:
        """Store a host summary, close every window the watermark has passed; (findings, verdicts, late)."""
        c = summary["cluster"]
        meta = store.get(f"{c}|meta") or {"pwm": {}, "closed": None, "open": {}}
        if meta["closed"] is not None and summary["window_end"] <= meta["closed"]:
            return [], [], True
        host = summary["host_id"]
        roster = store.get(f"{c}|roster") or []
        if host not in roster:
            store[f"{c}|roster"] = [*roster, host]
        store[f"{c}|{summary['window_start']}|{host}"] = [summary["step_ms"], summary["bus_bw"]]
        open_w = dict(meta["open"])
        open_w[str(summary["window_start"])] = summary["window_end"]
        pwm = dict(meta["pwm"])
        src = str(summary.get("src", 0))
        pwm[src] = max(pwm.get(src, summary["wm"]), summary["wm"])
        wm = self.watermark(pwm)
        findings: list[Finding] = []
        verdicts: list[Verdict] = []
        closed = meta["closed"]
        for key in sorted(open_w, key=int):
            w_end = open_w[key]
            if w_end + self.policy.cluster_grace > wm:
                break
            del open_w[key]
            closed = w_end if closed is None else max(closed, w_end)
            f, v = self._close(store, c, int(key), w_end)
            findings.extend(f)
            verdicts.extend(v)
        store[f"{c}|meta"] = {"pwm": pwm, "closed": closed, "open": open_w}
        return findings, verdicts, False

    def watermark(self, partition_wms: dict[str, int]) -> int:
        """The slowest source partition's newest event time (partitions far behind stop holding it back)."""
        newest = max(partition_wms.values())
        return max(min(partition_wms.values()), newest - self.policy.max_partition_skew)

    def _close(self, store: Store, cluster: str, start: int, end: int) -> tuple[list[Finding], list[Verdict]]:
        members: dict[str, tuple[float, float]] = {}
        for host in store.get(f"{cluster}|roster") or []:
            key = f"{cluster}|{start}|{host}"
            value = store.get(key)
            if value is not None:
                members[host] = (value[0], value[1])
                del store[key]
        verdicts = evaluate_window(members, start, end, self.policy)
        findings = []
        for verdict in verdicts:
            hkey = f"{cluster}|h|{verdict.host_id}"
            history, finding = update_history(store.get(hkey), verdict, cluster, self.policy)
            store[hkey] = history
            if finding is not None:
                findings.append(finding)
        return findings, verdicts


def update_history(
    history: dict[str, Any] | None, verdict: Verdict, cluster: str, policy: SlowHostPolicy
) -> tuple[dict[str, Any], Finding | None]:
    """Append a verdict to the host's last n; fire once per episode when k of n are slow."""
    hist = [*(history or {}).get("hist", []), [verdict.window_start, int(verdict.slow), verdict.z_step, verdict.z_bus_bw]]
    hist = hist[-policy.n :]
    flagged = bool((history or {}).get("flagged", False))
    slow_count = sum(h[1] for h in hist)
    finding = None
    if flagged and slow_count == 0:
        flagged = False  # the episode is over: a later slowdown is a new finding
    elif not flagged and verdict.slow and slow_count >= policy.k:
        flagged = True
        first_slow = next(h[0] for h in hist if h[1])
        score = max(verdict.z_step, -verdict.z_bus_bw)
        finding = Finding(
            finding_id=finding_id("slow_host", "slow_host", verdict.host_id, first_slow),
            detector="slow_host",
            rule="slow_host",
            scope="host",
            scope_key=verdict.host_id,
            host_id=verdict.host_id,
            cluster=cluster,
            ts=verdict.window_end,
            error_class="slow_host",
            count=slow_count,
            window_start=first_slow,
            window_end=verdict.window_end,
            recommended_action=policy.action,
            severity="warning",
            score=round(score, 3),
            evidence={
                "z_step": f"{verdict.z_step:.3f}",
                "z_bus_bw": f"{verdict.z_bus_bw:.3f}",
                "step_ms": f"{verdict.step_ms:.3f}",
                "peer_median_step_ms": f"{verdict.median_step_ms:.3f}",
                "slow_windows": f"{slow_count}/{len(hist)}",
            },
        )
    return {"hist": hist, "flagged": flagged}, finding
