"""The detect worker's Faust agents, timers and tasks, kept thin: they decode, call a pure rule, send.

The errors agent (repeat offenders, keyed by host), the cluster agent (the samples stage's
summaries, keyed by cluster) and the planner agent (findings and progress marks, keyed by
maintenance domain); the arrival-order tick and the event-time progress timers; the rebalance
handler; the tailers and the samples stage as tasks. ``streams.app`` builds what they use
(``AgentParts``) once.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import faust
import msgspec

from streams.cache import CheckpointCache
from streams.core.classify import classify
from streams.core.errors import InvalidRecordError
from streams.core.inventory import Inventory
from streams.core.messages import planner_message, to_wire
from streams.core.peers.messages import cluster_message, items_of
from streams.core.peers.stage import ClusterStage
from streams.core.peers.state import ClusterMeta
from streams.core.policy import Policy
from streams.core.stages import peer_step, repeat_step
from streams.core.state import CoreState
from streams.deadletter import faust_source
from streams.fleet_fold import FleetFold
from streams.intake import Intake
from streams.metrics import DetectMetrics
from streams.outputs import Outputs
from streams.planner_shell import PlannerShell, upstream_caught_up
from streams.samples import SamplesStage
from streams.tailer import WorkerLogs, catch_up_retrying
from streams.trains.error_days import ErrorDays
from streams.trains.step_forward import StepForward


@dataclass(frozen=True)
class AgentParts:
    """What the agents, timers and tasks use: the topics they consume or feed, the detection core's
    state and stages, the planner shell, the fleet fold, the outputs and the worker's logs."""

    errors_topic: faust.TopicT
    summaries_topic: faust.TopicT
    planner_topic: faust.TopicT
    policy: Policy
    inventory: Inventory
    inventory_known: asyncio.Event  # set once the inventory has been read to its end
    intake: Intake
    fold: FleetFold
    state: CoreState
    cluster_stage: ClusterStage
    cluster_cache: CheckpointCache
    plans: PlannerShell
    outputs: Outputs
    logs: WorkerLogs
    samples_stage: SamplesStage
    metrics: DetectMetrics
    tick_interval_s: float
    internal_partitions: int


def register_agents(app: faust.App, parts: AgentParts) -> dict[str, Any]:
    """The worker's agents, timers, rebalance handler and background tasks, on ``app``; returns the
    agents by name (tests drive them with ``test_context``)."""
    policy = parts.policy
    fold, intake = parts.fold, parts.intake
    error_days = ErrorDays(policy, parts.inventory.domain_of)  # errors the campaigns' safety test counts
    step_forward = StepForward(parts.inventory.domain_of)  # and the step time of the windows scored

    @app.agent(parts.errors_topic, name="errors")
    async def errors(stream: faust.StreamT) -> None:
        async for event in stream.events():
            record = await intake.valid_record(event)
            if record is None:
                continue
            msg = event.message
            signal = classify(record, policy)
            if signal is not None and (counted := error_days.observe(fold.fleet, signal)) is not None:
                await parts.outputs.publish([counted])
            step = repeat_step(parts.state.repeat, signal, (msg.partition, msg.offset), policy)
            if step.late:
                parts.metrics.late.labels("errors").inc()
            if step.finding is not None:
                await parts.outputs.send_finding(step.finding, msg)
            parts.plans.source_times.errors_read(msg.partition, record["ts"])

    @app.agent(parts.summaries_topic, name="cluster")
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
            before = _windows(parts.cluster_cache.get(meta_key))
            step = peer_step(
                parts.cluster_stage,
                parts.state.clusters,
                msg.cluster,
                items,
                f"{source.partition}.{source.offset}",  # the same id when Faust replays it
            )
            if step.late:
                parts.metrics.late.labels("cluster").inc(step.late)
            if step.verdicts:
                parts.metrics.windows_closed(msg.cluster, len({v.window_start for v in step.verdicts}))
            if _windows(parts.cluster_cache.get(meta_key)) != before:
                parts.cluster_cache.write_through(meta_key)  # a window opened or closed: persist now
            if counted_steps := step_forward.observe(fold.fleet, msg.cluster, step.verdicts):
                await parts.outputs.publish(counted_steps)
            for finding in step.findings:
                await parts.outputs.send_finding(finding, source)
            parts.plans.source_times.cluster_read(
                source.partition, msg.cluster, step.floor, drained=step.drained
            )
            parts.metrics.busy.labels("cluster").inc(time.perf_counter() - t0)
            parts.metrics.handled.labels("cluster").inc(len(items))

    @app.agent(parts.planner_topic, name="planner")
    async def planner(stream: faust.StreamT) -> None:
        async for event in stream.events():
            try:
                msg = planner_message(event.value)
            except msgspec.ValidationError as exc:
                refused = InvalidRecordError(f"not a planner message: {exc}")
                await parts.outputs.send_dead_letter(refused, faust_source(event.message, event.value))
                continue
            # the fleet state has every action published so far, the inventory every domain's size:
            # a restarted worker deciding a re-delivered message on an unread inventory sized a domain
            # by the hosts it had seen fail, and halted its train (marks releasing nothing read neither)
            if parts.plans.needs_fleet(msg, event.message.partition):
                await asyncio.gather(
                    catch_up_retrying(parts.logs.actions), catch_up_retrying(parts.logs.inventory)
                )
            # a failed publish ends the worker (Outputs.publish): no snapshot may keep actions the log never got
            with fold.in_flight():
                await parts.outputs.publish(parts.plans.decide(fold.fleet, msg, event.message.partition))
                parts.plans.settle(event.message.partition)  # only now may decided findings leave the table

    @app.timer(parts.tick_interval_s)
    async def tick() -> None:
        parts.metrics.sample_rate()
        if not parts.plans.ordered and parts.logs.planner_ready:
            for tick in parts.plans.ticks(fold.fleet, intake.watermark):
                await parts.planner_topic.send(key=tick.domain.encode(), value=to_wire(tick), force=True)

    @app.timer(parts.plans.look_s)  # a fifth of detect.plan_quiet_s (streams.planner_shell)
    async def progress() -> None:
        await send_progress(app, parts)  # sent only when a mark changed, or as a keepalive

    async def on_revoked(sender: Any, revoked: set[Any], *args: Any, **kwargs: Any) -> None:
        parts.cluster_cache.drop()  # the table is the truth again after a rebalance
        parts.plans.revoked(revoked)
        for tp in revoked:  # handled by another worker meanwhile: caught up is judged by the commit again
            intake.forget(tp.topic, tp.partition)

    app.on_partitions_revoked.connect(on_revoked)  # type: ignore[arg-type]

    @app.task
    async def tailers() -> None:
        await asyncio.gather(
            parts.logs.inventory.run(),
            parts.logs.actions.run(),
            parts.logs.findings.run(),
            inventory_read(),
        )

    async def inventory_read() -> None:
        await catch_up_retrying(parts.logs.inventory)
        parts.inventory_known.set()

    @app.task
    async def samples() -> None:
        await parts.samples_stage.run_until_stopped()

    return {"errors": errors, "cluster": cluster, "planner": planner}


async def send_progress(app: faust.App, parts: AgentParts) -> None:
    """Tell every planner partition how far the finding sources this worker owns have got."""
    consumer = getattr(app, "_consumer", None)
    if consumer is None or not parts.plans.ordered:
        return
    # Faust keeps the offsets committed at assignment only here; a partition with nothing handled
    # since is caught up when they reach its end
    committed = getattr(consumer, "_committed_offset", {})
    upstream_quiet = upstream_caught_up(parts.samples_stage.lag(), parts.samples_stage.partitions.torn)
    clusters = parts.inventory.clusters() if parts.inventory_known.is_set() else None
    progress = await parts.plans.progress(
        consumer, parts.intake.last_offsets, committed, upstream_quiet=upstream_quiet, clusters=clusters
    )
    if progress is None:
        return
    value = to_wire(progress)
    for partition in range(parts.internal_partitions):
        await parts.planner_topic.send(key=None, partition=partition, value=value, force=True)


def _windows(stored: dict[str, Any] | None) -> tuple[Any, ...]:
    """The part of a cluster's meta that must be persisted at once when it changes."""
    meta = ClusterMeta.from_stored(stored)
    return tuple(sorted(meta.open)), meta.closed
