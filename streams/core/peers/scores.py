"""How the slow-host detector judges a host: robust z-scores against its peers, then evidence over its windows.

Pure functions of one closed window's members (``evaluate_window``, the peer test of
``ground.slow_peers`` that the batch view shares) and of a host's verdict history
(``update_history``, which raises the finding); the cluster stage (``streams.core.peers.stage``) decides when a
window is closed and stores what they return.
"""

from __future__ import annotations

from functools import lru_cache

import msgspec

from ground.slow_evidence import SequentialTest, episode_over, evidence_since
from ground.slow_peers import Member, judge_window, robust_z
from streams.core.findings import Finding
from streams.core.ids import finding_id
from streams.core.peers.state import HostHistory
from streams.core.policy import SlowHostPolicy

__all__ = ["Member", "Verdict", "evaluate_window", "robust_z", "update_history"]


class Verdict(msgspec.Struct, frozen=True):
    """One host's judgement in one closed window (a struct, not a dataclass: one per host and window is made,
    and a frozen dataclass costs ten times as much to build)."""

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
        )
        for v in judge_window(members, policy, degraded)
    ]


def update_history(
    history: HostHistory | None, verdict: Verdict, cluster: str, policy: SlowHostPolicy
) -> tuple[HostHistory, Finding | None]:
    """Add a window's verdict to the host's evidence (``ground.slow_evidence``, a CUSUM over its slow windows);
    fire once per episode when the evidence reaches ``policy.evidence`` nats.

    Windows are of event time, not arrival: a host away for ``n`` windows (drained, repaired, powered
    off) comes back with its evidence forgotten and its episode over, so a host still slow after its
    repair is reported again. A flagged host's episode also ends once it has been seen healthy long enough
    whatever the window's length (``ground.slow_evidence.episode_over``: ``clear_after`` since its last
    slow window ended, and its evidence back to zero). The finding's window starts at the first slow window of the evidence run that reached the
    threshold (a run ends with its episode), so its id and times depend on the verdicts alone, whatever
    order the partitions came in, and two episodes never share an id.
    """
    # the policy's window, or the sample interval when samples are longer (window_bounds)
    length = verdict.window_end - verdict.window_start
    since = evidence_since(verdict.window_start, length, policy.n)
    history = history or HostHistory()
    earlier = [h for h in history.hist if since <= h[0] < verdict.window_start]
    hist = (*earlier, (verdict.window_start, int(verdict.slow), verdict.z_step, verdict.z_bus_bw))
    hist = hist[-policy.n :]
    if not earlier:  # new, or back from an absence: start afresh
        history = HostHistory()
    test = _sequential(policy.healthy_share, policy.slow_share, policy.evidence)
    s = min(test.step(history.s, verdict.slow), test.h)  # capped: a cured host clears within hours
    start, slow, seen = history.start, history.slow, history.seen
    if s == 0.0:
        start, slow, seen = None, 0, 0
    elif start is not None or verdict.slow:  # a run begins at a slow window
        start = verdict.window_start if start is None else start
        slow, seen = slow + int(verdict.slow), seen + 1
    last_slow = verdict.window_start if verdict.slow else history.last_slow
    flagged = history.flagged
    if flagged and episode_over(s, last_slow, verdict.window_end, length, policy.clear_after):
        # A later slowdown is a new finding; its run (its id) begins afresh (the evidence, at zero, reset it).
        flagged, start, slow, seen = False, None, 0, 0
    finding = None
    if not flagged and s >= test.h and start is not None:
        flagged = True
        score = (
            verdict.degraded if verdict.reference == "telemetry" else max(verdict.z_step, -verdict.z_bus_bw)
        )
        finding = Finding(
            finding_id=finding_id("slow_host", "slow_host", verdict.host_id, start),
            detector="slow_host",
            rule="slow_host",
            scope="host",
            scope_key=verdict.host_id,
            host_id=verdict.host_id,
            cluster=cluster,
            ts=verdict.window_end,
            error_class="slow_host",
            count=slow,
            window_start=start,
            window_end=verdict.window_end,
            recommended_action=policy.action,
            severity="warning",
            score=round(score, 3),
            evidence=_evidence(verdict, s, test.h, slow, seen),
        )
    return HostHistory(hist, flagged, s, start, slow, seen, last_slow), finding


@lru_cache(maxsize=16)
def _sequential(p0: float, p1: float, h: float) -> SequentialTest:
    """``SlowHostPolicy.sequential``, built once per policy rather than once per host and window."""
    return SequentialTest(p0, p1, h)


def _evidence(verdict: Verdict, s: float, h: float, slow: int, seen: int) -> dict[str, str]:
    """What the finding rests on: the evidence (nats, slow windows of the run that reached it) and the last
    window's signal, z against its peers or, alone in its job, its degraded telemetry."""
    common = {
        "evidence_nats": f"{s:.2f}",
        "threshold_nats": f"{h:g}",
        "slow_windows": f"{slow}/{seen}",
        "step_ms": f"{verdict.step_ms:.3f}",
    }
    if verdict.reference == "telemetry":
        return {
            "reference": "telemetry (alone in its job: PCIe link below max, thermal throttling or a slow NIC port)",
            "degraded_samples": f"{verdict.degraded:.3f}",
            **common,
        }
    return {
        "z_step": f"{verdict.z_step:.3f}",
        "z_bus_bw": f"{verdict.z_bus_bw:.3f}",
        "peer_median_step_ms": f"{verdict.median_step_ms:.3f}",
        **common,
    }
