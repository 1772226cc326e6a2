"""The pure part of the host-window stage: one decoded sample -> messages for the cluster stage.

``SampleFolder`` folds a partition's samples into per-host windows (``HostStage``) and says when the
partition's event time enters a new window; ``streams.samples`` runs it over a consumer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from streams.core.peers.messages import ClusterItem, SourceIdle, SourceProgress
from streams.core.policy import Policy
from streams.core.samples.checkpoint import PartitionState
from streams.core.samples.windows import HostStage, window_bounds


class SampleFolder:
    """The pure part: one decoded sample -> messages for the cluster stage (summaries, progress)."""

    def __init__(self, policy: Policy, nsrc: int, clusters: Callable[[], Iterable[str]]) -> None:
        self.stage = HostStage(policy.slow_host)
        self.window = policy.slow_host.window
        self.nsrc = nsrc
        self.clusters = clusters  # every cluster the inventory knows (progress goes to each)
        self.seen_clusters: set[str] = set()

    def fold(
        self, state: PartitionState, record: dict[str, Any], now_ms: int | None = None
    ) -> tuple[list[ClusterItem], bool]:
        """Fold one valid record; (messages keyed by their ``cluster``, was_late).

        With ``now_ms``, the event time reported downstream (progress, summaries' ``wm``) is
        capped at it: one host's fast clock must not close every cluster's windows early.
        """
        out: list[ClusterItem] = []
        late = False
        if record["event_type"] == "HostSampled":
            summaries, late = self.stage.add_sample(state.hosts, record)
            for summary in summaries:
                wm = capped(summary.wm, now_ms)
                out.append(msgspec.structs.replace(summary, src=state.partition, nsrc=self.nsrc, wm=wm))
        out += self._progress(state, record, now_ms)
        return out, late

    def _progress(
        self, state: PartitionState, record: dict[str, Any], now_ms: int | None = None
    ) -> list[ClusterItem]:
        """Tell every cluster when this partition's event time (capped at ``now_ms``) enters a new window."""
        ts = capped(record["ts"], now_ms)
        if ts <= state.wm:
            return []
        state.wm = ts
        interval = record["payload"].get("interval_s", 0) if record["event_type"] == "HostSampled" else 0
        start, _ = window_bounds(ts, interval, self.window)
        self.seen_clusters.add(record["cluster"])
        if state.wm_window == start:
            return []
        state.wm_window = start
        return self.progress(state)

    def progress(self, state: PartitionState, kind: str = "wm") -> list[ClusterItem]:
        """The partition's event time (``wm``) or its idleness (``idle``), for every known cluster."""
        clusters = sorted(self.seen_clusters | set(self.clusters()))
        mark = SourceIdle if kind == "idle" else SourceProgress
        return [mark(c, state.partition, self.nsrc, state.wm) for c in clusters]


def capped(ts: int, now_ms: int | None) -> int:
    """An event time no later than now: validation lets a clock run ``max_future`` ahead."""
    return ts if now_ms is None else min(ts, now_ms)
