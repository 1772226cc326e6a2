"""The core's per-stage steps, the same for every runner: one error record, one bundle for a cluster.

The live worker runs each stage in its own agent (errors keyed by host, cluster messages keyed by
cluster) with its state in Faust tables; the backtest and the twin run them one after the other in
``DetectionCore`` with their state in dicts. Both call these steps, so a rule is wired once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from streams.core.classify import Signal
from streams.core.findings import Finding
from streams.core.peers.messages import ClusterItem
from streams.core.peers.scores import Verdict
from streams.core.peers.stage import ClusterStage
from streams.core.planning.sources import cluster_drained, cluster_floor
from streams.core.policy import Policy
from streams.core.repeat import HostState, HostStep, fold_host
from streams.core.state import KeyedState

NOT_COUNTED = HostStep(None)  # a record no error class counts


def repeat_step(
    state: KeyedState, signal: Signal | None, position: tuple[int, int], policy: Policy
) -> HostStep:
    """Fold a classified error (``classify`` of a valid record read at (partition, offset)) into its
    host's stored state; the worker also counts the signal for the campaigns' safety test."""
    if signal is None:
        return NOT_COUNTED
    step = fold_host(HostState.from_stored(state.get(signal.host_id)), signal, position, policy)
    if step.state is not None:
        state[signal.host_id] = step.state.stored()
    return step


@dataclass(frozen=True, slots=True)
class PeerStep:
    """What one bundle did to its cluster: findings, window verdicts, late summaries, and how far it got."""

    findings: list[Finding]
    verdicts: list[Verdict]
    late: int
    floor: int | None  # no later finding of this cluster at or before this event time
    drained: bool  # every samples partition has declared itself idle to this cluster


def peer_step(
    stage: ClusterStage,
    state: KeyedState,
    cluster: str,
    items: Sequence[ClusterItem],
    bundle_id: str,
    *,
    replayable: bool = True,
) -> PeerStep:
    """One bundle of a cluster's summaries and source marks through the peer comparison."""
    findings, verdicts, late = stage.add_bundle(state, cluster, items, bundle_id, replayable=replayable)
    return PeerStep(
        findings,
        verdicts,
        late,
        cluster_floor(state, cluster, stage.policy),
        cluster_drained(state, cluster),
    )
