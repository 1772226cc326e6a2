"""How the slow-host detector judges a host: robust z-scores against its peers, then k slow of the last n windows.

Pure functions of one closed window's members (``evaluate_window``) and of a host's verdict
history (``update_history``, which raises the finding); the cluster stage (``streams.slow``)
decides when a window is closed and stores what they return.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from streams.findings import Finding
from streams.ids import finding_id
from streams.policy import SlowHostPolicy
from streams.slow_state import HostHistory

MAD_TO_SD = 1.4826


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


Member = tuple[float, float, str | None]  # a host's window: mean step time, mean bus bandwidth, job


def _references(members: dict[str, Member], min_job_peers: int) -> dict[str, tuple[float, float]]:
    """Each judged host's reference (step, bus bandwidth): its job's medians.

    Hosts of one synchronous job share a model and a step time; another job on the same cluster may
    run at another pace (another model, another batch), so neither the cluster's median nor another
    job's says anything about a host. A job with fewer hosts than ``min_job_peers`` in the window
    has no median of its own to trust: its hosts get no reference and are not judged. Summaries
    that name no job (written before jobs were recorded) are compared with each other.
    """
    by_job: dict[str | None, list[str]] = {}
    for host, (_, _, job) in members.items():
        by_job.setdefault(job, []).append(host)
    refs: dict[str, tuple[float, float]] = {}
    for job, hosts in by_job.items():
        if job is not None and len(hosts) < min_job_peers:
            continue
        ref = (
            statistics.median(members[h][0] for h in hosts),
            statistics.median(members[h][1] for h in hosts),
        )
        refs.update((h, ref) for h in hosts)
    return refs


def evaluate_window(
    members: dict[str, Member], window_start: int, window_end: int, policy: SlowHostPolicy
) -> list[Verdict]:
    """Score each host's (step_ms, bus_bw) against its peers; too few peers -> no verdicts.

    Each host's values are taken relative to its job's medians (``_references``; a host of a job too
    small for a median gets no verdict), and the robust z
    of those ratios is computed over the whole cluster. A window is slow when a ratio is both an
    outlier (robust z) and worse than 1 by at least ``min_slowdown``: significant and large enough
    to matter to a synchronous job.
    """
    if len(members) < policy.min_peers:
        return []
    refs = _references(members, policy.min_job_peers)
    if len(refs) < policy.min_peers:
        return []
    steps = {h: members[h][0] / r[0] if r[0] > 0 else 1.0 for h, r in refs.items()}
    bws = {h: members[h][1] / r[1] if r[1] > 0 else 1.0 for h, r in refs.items()}
    med_s, scale_s = robust_z(list(steps.values()), policy.min_mad_rel)
    med_b, scale_b = robust_z(list(bws.values()), policy.min_mad_rel)
    out = []
    for host in sorted(refs):
        step, bw = steps[host], bws[host]
        z_s = (step - med_s) / scale_s
        z_b = (bw - med_b) / scale_b
        slow_step = z_s >= policy.z_step and step >= med_s * (1 + policy.min_slowdown)
        slow_bw = -z_b >= policy.z_bus_bw and bw <= med_b * (1 - policy.min_slowdown)
        slow = slow_step or slow_bw
        out.append(Verdict(host, window_start, window_end, z_s, z_b, slow, members[host][0], refs[host][0]))
    return out


def update_history(
    history: HostHistory | None, verdict: Verdict, cluster: str, policy: SlowHostPolicy
) -> tuple[HostHistory, Finding | None]:
    """Append a verdict to the host's last n windows; fire once per episode when k of them are slow.

    "The last n" are windows of event time, not the last n verdicts: a host away for a while (drained,
    repaired, powered off) comes back with the verdicts from before its absence forgotten, and an
    episode flagged before it is over, so a host still slow after its repair is reported again.
    """
    # the policy's window, or the sample interval when samples are longer (window_bounds)
    length = verdict.window_end - verdict.window_start
    since = verdict.window_start - (policy.n - 1) * length
    history = history or HostHistory()
    earlier = [h for h in history.hist if since <= h[0] < verdict.window_start]
    hist = (*earlier, (verdict.window_start, int(verdict.slow), verdict.z_step, verdict.z_bus_bw))
    hist = hist[-policy.n :]
    flagged = history.flagged and bool(earlier)
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
    return HostHistory(hist, flagged), finding
