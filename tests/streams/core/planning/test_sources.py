"""What the cluster stage's store tells the planner of a cluster source: how far, and whether drained."""

from __future__ import annotations

from typing import Any

from streams.core.peers.stage import ClusterStage
from streams.core.planning.sources import SourceTimes, cluster_drained
from streams.core.policy import Policy
from streams.testing import START_TS


def test_a_cluster_is_drained_once_every_samples_partition_has_declared_itself_idle(policy: Policy) -> None:
    stage, store = ClusterStage(policy.slow_host), {}  # type: ignore[var-annotated]
    assert not cluster_drained(store, "c0")  # nothing heard yet
    stage.add_watermark(store, "c0", 0, 2, START_TS, idle=True)
    assert not cluster_drained(store, "c0")  # partition 1 unheard of
    stage.add_watermark(store, "c0", 1, 2, START_TS, idle=True)
    assert cluster_drained(store, "c0")
    stage.add_watermark(store, "c0", 1, 2, START_TS + 1)  # partition 1 has records again
    assert not cluster_drained(store, "c0")


def test_a_source_is_upstream_idle_only_when_every_cluster_it_carries_is_drained() -> None:
    times: Any = SourceTimes()
    assert not times.upstream_idle(0)  # no cluster known on it yet
    times.cluster_read(0, "c0", START_TS, drained=True)
    times.cluster_read(0, "c1", START_TS, drained=False)
    assert not times.upstream_idle(0)
    times.cluster_read(0, "c1", START_TS, drained=True)
    assert times.upstream_idle(0)
    times.forget_upstream(0)
    assert not times.upstream_idle(0)
