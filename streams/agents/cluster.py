"""The cluster agent (the samples stage's summaries, keyed by cluster, through the peer comparison)
and the samples stage that feeds it, run as a task."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import faust
import msgspec

from streams.cache import CheckpointCache
from streams.core.errors import InvalidRecordError
from streams.core.peers.messages import cluster_message, items_of
from streams.core.peers.stage import ClusterStage
from streams.core.peers.state import ClusterMeta
from streams.core.planning.sources import SourceTimes
from streams.core.stages import peer_step
from streams.deadletter import faust_source
from streams.fleet_fold import FleetFold
from streams.intake import Intake
from streams.metrics import DetectMetrics
from streams.outputs import Outputs
from streams.samples import SamplesStage
from streams.trains.step_forward import StepForward


@dataclass(frozen=True)
class ClusterParts:
    """What the cluster agent and the samples stage use: the summaries topic, the peer comparison and
    its keyed state (per cluster, behind a checkpoint cache), the fleet fold and the hosts' domains
    (the step time of the windows scored), and where its reading time is told."""

    topic: faust.TopicT
    intake: Intake
    stage: ClusterStage
    cache: CheckpointCache  # the cluster stage's keyed state: "<cluster>|..." -> its values
    fold: FleetFold
    domain_of: Callable[[str], str]
    outputs: Outputs
    metrics: DetectMetrics
    source_times: SourceTimes  # the planner's marks of how far this source has got
    samples_stage: SamplesStage


def register_cluster(app: faust.App, parts: ClusterParts) -> faust.types.AgentT:
    intake, fold, cache = parts.intake, parts.fold, parts.cache
    step_forward = StepForward(parts.domain_of)  # the step time of the windows scored

    @app.agent(parts.topic, name="cluster")
    async def cluster(stream: faust.StreamT) -> None:
        async for event in stream.events():
            t0 = time.perf_counter()
            source = event.message
            intake.read(source)
            try:
                msg = cluster_message(event.value)
            except msgspec.DecodeError as exc:
                refused = InvalidRecordError(f"not a cluster-stage message: {exc}")
                await parts.outputs.send_dead_letter(refused, faust_source(source, event.value))
                continue
            items = items_of(msg)
            meta_key = f"{msg.cluster}|meta"
            before = _windows(cache.get(meta_key))
            step = peer_step(
                parts.stage,
                cache,
                msg.cluster,
                items,
                f"{source.partition}.{source.offset}",  # the same id when Faust replays it
            )
            if step.late:
                parts.metrics.late.labels("cluster").inc(step.late)
            if step.verdicts:
                parts.metrics.windows_closed(msg.cluster, len({v.window_start for v in step.verdicts}))
            if _windows(cache.get(meta_key)) != before:
                cache.write_through(meta_key)  # a window opened or closed: persist now
            if counted_steps := step_forward.observe(fold.fleet, msg.cluster, step.verdicts):
                await parts.outputs.publish(counted_steps)
            for finding in step.findings:
                await parts.outputs.send_finding(finding, source)
            parts.source_times.cluster_read(source.partition, msg.cluster, step.floor, drained=step.drained)
            parts.metrics.busy.labels("cluster").inc(time.perf_counter() - t0)
            parts.metrics.handled.labels("cluster").inc(len(items))

    return cluster


def register_samples(app: faust.App, parts: ClusterParts) -> None:
    """The samples stage (a plain consumer: samples are most of the input) as a task."""

    @app.task
    async def samples() -> None:
        await parts.samples_stage.run_until_stopped()


def _windows(stored: dict[str, Any] | None) -> tuple[Any, ...]:
    """The part of a cluster's meta that must be persisted at once when it changes."""
    meta = ClusterMeta.from_stored(stored)
    return tuple(sorted(meta.open)), meta.closed
