"""How one window judges a host against its peers: job-relative ratios, robust z, a minimum slowdown.

The single implementation shared by the streaming slow-host detector (``streams.core.peers.scores``) and the
batch slow-host view (``analytics.jobs.fabric``), so both compare a host with the same peers, in the
same windows, with the same thresholds. Pure: numbers in, verdicts out; no polars (the worker imports
this before its shutdown deadline blocks signals, and polars' thread pool would then catch SIGTERM).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import msgspec

from ground.packaged_policy import packaged, parse_duration_ms
from ground.slow_evidence import SequentialTest

MAD_TO_SD = 1.4826
# a host alone in its job is slow in a window when this share of its samples is degraded (``[degraded]``)
TELEMETRY_SHARE: float = packaged("degraded", "telemetry_share")


class PeerThresholds(Protocol):
    """What a window's judgement needs (``streams.core.policy.SlowHostPolicy`` is one)."""

    @property
    def window(self) -> int: ...
    @property
    def z_step(self) -> float: ...
    @property
    def z_bus_bw(self) -> float: ...
    @property
    def min_mad_rel(self) -> float: ...
    @property
    def min_slowdown(self) -> float: ...
    @property
    def min_peers(self) -> int: ...
    @property
    def min_job_peers(self) -> int: ...
    @property
    def k(self) -> int: ...
    @property
    def n(self) -> int: ...
    @property
    def slow_share(self) -> float: ...
    @property
    def healthy_share(self) -> float: ...
    @property
    def evidence(self) -> float: ...


def _default(key: str) -> Any:
    return packaged("slow_host", key)


@dataclass(frozen=True, slots=True)
class PeerRule:
    """The peer test's thresholds and the evidence that flags a host; the defaults are read from ``[slow_host]``
    of the packaged policy file (``ground.packaged_policy``), for a batch job run without the detection
    policy at hand."""

    window: int = parse_duration_ms(_default("window"))
    z_step: float = _default("z_step")
    z_bus_bw: float = _default("z_bus_bw")
    min_mad_rel: float = _default("min_mad_rel")
    min_slowdown: float = _default("min_slowdown")
    min_peers: int = _default("min_peers")
    min_job_peers: int = _default("min_job_peers")
    k: int = _default("k")
    n: int = _default("n")
    slow_share: float = _default(
        "slow_share"
    )  # the finding's CUSUM (ground.slow_evidence): H1, H0 and nats to flag
    healthy_share: float = _default("healthy_share")
    evidence: float = _default("evidence")

    @property
    def sequential(self) -> SequentialTest:
        """The CUSUM over a host's slow windows that flags it (the detector's finding)."""
        return SequentialTest(self.healthy_share, self.slow_share, self.evidence)

    @classmethod
    def of(cls, policy: PeerThresholds) -> PeerRule:
        """The rule a policy object runs with."""
        return cls(
            policy.window,
            policy.z_step,
            policy.z_bus_bw,
            policy.min_mad_rel,
            policy.min_slowdown,
            policy.min_peers,
            policy.min_job_peers,
            policy.k,
            policy.n,
            policy.slow_share,
            policy.healthy_share,
            policy.evidence,
        )


class PeerVerdict(msgspec.Struct, frozen=True):
    """One judged host in one window: robust z of its job-relative step time and bus bandwidth, or, for a
    host alone in its job, the share of its samples whose job-independent telemetry shows degradation
    (a struct, not a frozen dataclass: one per host and window is made, and a struct costs a tenth to build)."""

    host_id: str
    z_step: float
    z_bus_bw: float
    slow: bool
    step_ms: float
    median_step_ms: float  # its reference step time: its job's median, or its small job's fastest other host
    excess: float  # its job-relative step time over the window's median ratio, minus 1
    reference: str = "peers"  # or "telemetry": alone in its job, judged by PCIe link, throttling, NIC ports
    degraded: float = 0.0  # share of its window's samples with degraded job-independent telemetry


Member = tuple[float, float, str | None]  # a host's window: mean step time, mean bus bandwidth, job


class Ticks(Protocol):
    """Event times in ms: an int, or a column of them (a Polars expression: ``analytics.jobs.slow_view``)."""

    def __add__(self, other: Any, /) -> Any: ...
    def __sub__(self, other: Any, /) -> Any: ...
    def __mul__(self, other: Any, /) -> Any: ...
    def __mod__(self, other: Any, /) -> Any: ...


T = TypeVar("T", bound=Ticks)


def window_bounds(
    ts: T, interval_s: T, window_ms: T | int, larger: Callable[[Any, Any], Any] = max
) -> tuple[T, T]:
    """The window a sample falls in; a sample longer than the window covers exactly one window.

    The one rule of every form: on ints record by record (the samples fold), or on Polars columns with
    ``larger`` their elementwise maximum (the batch view's ``host_windows``).
    """
    length = larger(window_ms, interval_s * 1000)
    start = ts - ts % length
    return start, start + length


def robust_z(values: list[float], min_mad_rel: float) -> tuple[float, float]:
    """(median, scale) with scale = 1.4826 * MAD, floored at min_mad_rel * |median|."""
    med = statistics.median(values)
    mad = statistics.median([abs(v - med) for v in values])
    scale = max(MAD_TO_SD * mad, min_mad_rel * abs(med), 1e-12)
    return med, scale


def references(members: Mapping[str, Member], min_job_peers: int) -> dict[str, tuple[float, float]]:
    """Each judged host's reference (step, bus bandwidth): its job's medians, or in a small job its best peer.

    Hosts of one synchronous job share a model and a step time; another job on the same cluster may
    run at another pace (another model, another batch), so neither the cluster's median nor another
    job's says anything about a host. A job of ``min_job_peers`` hosts or more in the window is its
    hosts' reference through its medians. A smaller job of 2 or more hosts has no median to trust (in
    a pair the median is halfway to the slow host): each of its hosts is compared with the fastest
    step time and the best bus bandwidth among the *other* hosts of its job, so the slow host of a
    pair stands out by its whole slowdown and the healthy one reads as fast, not slow. A host alone
    in its job has no peer and is not judged. Summaries that name no job (written before jobs were
    recorded) are compared with each other through their medians.
    """
    return _references(members, _by_job(members), min_job_peers)


def _by_job(members: Mapping[str, Member]) -> dict[str | None, list[str]]:
    """The window's hosts by job, in the order they came."""
    by_job: dict[str | None, list[str]] = {}
    for host, (_, _, job) in members.items():
        by_job.setdefault(job, []).append(host)
    return by_job


def _references(
    members: Mapping[str, Member], by_job: Mapping[str | None, list[str]], min_job_peers: int
) -> dict[str, tuple[float, float]]:
    refs: dict[str, tuple[float, float]] = {}
    for job, hosts in by_job.items():
        summaries = [members[h] for h in hosts]
        if job is None or len(hosts) >= min_job_peers:
            ref = (
                statistics.median([m[0] for m in summaries]),
                statistics.median([m[1] for m in summaries]),
            )
            refs.update((h, ref) for h in hosts)
        elif len(hosts) >= 2:
            for i, h in enumerate(hosts):
                others = summaries[:i] + summaries[i + 1 :]
                refs[h] = (min([o[0] for o in others]), max([o[1] for o in others]))
    return refs


def judge_window(
    members: Mapping[str, Member], rule: PeerThresholds, degraded: Mapping[str, float] | None = None
) -> list[PeerVerdict]:
    """Score each host's (step_ms, bus_bw) against its peers, sorted by host; too few peers -> none.

    Each host's values are taken relative to its job's reference (``references``: the job's medians,
    or in a job of 2 to ``min_job_peers`` - 1 hosts its best other host; a host alone in its job gets
    no verdict), and the robust z of those ratios is computed over all the
    window's judged hosts (one cluster). A window is slow when a ratio is both an outlier (robust z)
    and worse than 1 by at least ``min_slowdown``: significant and large enough to matter to a
    synchronous job. A host alone in its job has no peer; it is judged by its job-independent telemetry
    instead (``degraded``: per host, the share of its window's samples ``ground.degraded.sample_degraded``),
    slow when at least ``TELEMETRY_SHARE`` of them show it. In a job of 2-3 hosts both count (its other hosts may be
    slow too: a pair of slow hosts compared with each other reads as healthy); in a job of
    ``min_job_peers`` or more the peers alone decide.
    """
    degraded = degraded or {}
    by_job = _by_job(members)
    refs = _references(members, by_job, rule.min_job_peers) if len(members) >= rule.min_peers else {}
    if len(refs) < rule.min_peers:
        refs = {}
    alone = _telemetry(members, by_job, refs, degraded, rule.min_job_peers)
    if not refs:
        return alone
    judged = [(h, members[h], r) for h, r in refs.items()]
    steps = [m[0] / r[0] if r[0] > 0 else 1.0 for _, m, r in judged]
    bws = [m[1] / r[1] if r[1] > 0 else 1.0 for _, m, r in judged]
    med_s, scale_s = robust_z(steps, rule.min_mad_rel)
    med_b, scale_b = robust_z(bws, rule.min_mad_rel)
    z_step, z_bus_bw, min_job_peers = rule.z_step, rule.z_bus_bw, rule.min_job_peers
    slow_above, slow_below = med_s * (1 + rule.min_slowdown), med_b * (1 - rule.min_slowdown)
    out = alone
    for (host, member, ref), step, bw in zip(judged, steps, bws, strict=True):
        z_s = (step - med_s) / scale_s
        z_b = (bw - med_b) / scale_b
        slow_step = z_s >= z_step and step >= slow_above
        slow_bw = -z_b >= z_bus_bw and bw <= slow_below
        excess = step / med_s - 1.0 if med_s > 0 else 0.0
        share = degraded.get(host, 0.0)
        # in a job of 2-3 hosts the other hosts may be slow too (a pair of slow hosts reads as two peers):
        # its job-independent telemetry counts as well
        tele = share >= TELEMETRY_SHARE and len(by_job[member[2]]) < min_job_peers
        by = "peers" if slow_step or slow_bw or not tele else "telemetry"
        out.append(
            PeerVerdict(host, z_s, z_b, slow_step or slow_bw or tele, member[0], ref[0], excess, by, share)
        )
    out.sort(key=_host)
    return out


def _host(verdict: PeerVerdict) -> str:
    return verdict.host_id


def _telemetry(
    members: Mapping[str, Member],
    by_job: Mapping[str | None, list[str]],
    refs: Mapping[str, object],
    degraded: Mapping[str, float],
    min_job_peers: int,
) -> list[PeerVerdict]:
    """Verdicts from their telemetry alone for the hosts without a peer reference: alone in their job, or
    in a job of 2-3 hosts in a window with too few judged hosts for a peer test."""
    out = []
    for host, (step, _, job) in members.items():
        if host in refs or job is None or len(by_job[job]) >= min_job_peers:
            continue
        share = degraded.get(host, 0.0)
        out.append(PeerVerdict(host, 0.0, 0.0, share >= TELEMETRY_SHARE, step, step, 0.0, "telemetry", share))
    return out
