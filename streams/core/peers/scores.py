"""How the slow-host detector judges a host: robust z-scores against its peers, then k slow of the last n windows.

Pure functions of one closed window's members (``evaluate_window``, the peer test of
``ground.slow_peers`` that the batch view shares) and of a host's verdict history
(``update_history``, which raises the finding); the cluster stage (``streams.core.peers.stage``) decides when a
window is closed and stores what they return.
"""

from __future__ import annotations

from dataclasses import dataclass

from ground.slow_peers import Member, judge_window, robust_z
from streams.core.findings import Finding
from streams.core.ids import finding_id
from streams.core.peers.state import HostHistory
from streams.core.policy import SlowHostPolicy

__all__ = ["Member", "Verdict", "evaluate_window", "robust_z", "update_history"]


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
    reference: str = "peers"  # or "telemetry" (alone in its job: PCIe link, thermal throttling, NIC ports)
    degraded: float = 0.0  # share of the window's samples with degraded job-independent telemetry


def evaluate_window(
    members: dict[str, Member],
    window_start: int,
    window_end: int,
    policy: SlowHostPolicy,
    degraded: dict[str, float] | None = None,
) -> list[Verdict]:
    """Score each host against its job's peers, or alone in its job by its telemetry
    (``ground.slow_peers.judge_window``, the same test the batch view runs); too few peers -> none."""
    return [
        Verdict(
            v.host_id,
            window_start,
            window_end,
            v.z_step,
            v.z_bus_bw,
            v.slow,
            v.step_ms,
            v.median_step_ms,
            v.reference,
            v.degraded,
        )  # fmt: skip
        for v in judge_window(members, policy, degraded)
    ]


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
        score = (
            verdict.degraded if verdict.reference == "telemetry" else max(verdict.z_step, -verdict.z_bus_bw)
        )
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
            evidence=_evidence(verdict, slow_count, len(hist)),
        )
    return HostHistory(hist, flagged), finding


def _evidence(verdict: Verdict, slow_count: int, windows: int) -> dict[str, str]:
    """What the finding rests on: z against its peers, or, alone in its job, its degraded telemetry."""
    if verdict.reference == "telemetry":
        return {
            "reference": "telemetry (alone in its job: PCIe link below max, thermal throttling or a slow NIC port)",
            "degraded_samples": f"{verdict.degraded:.3f}",
            "step_ms": f"{verdict.step_ms:.3f}",
            "slow_windows": f"{slow_count}/{windows}",
        }
    return {
        "z_step": f"{verdict.z_step:.3f}",
        "z_bus_bw": f"{verdict.z_bus_bw:.3f}",
        "step_ms": f"{verdict.step_ms:.3f}",
        "peer_median_step_ms": f"{verdict.median_step_ms:.3f}",
        "slow_windows": f"{slow_count}/{windows}",
    }
