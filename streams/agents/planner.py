"""The planner agent (findings and progress marks, keyed by maintenance domain), the arrival-order
tick and the event-time progress timer."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

import faust
import msgspec

from streams.core.errors import InvalidRecordError
from streams.core.messages import planner_message, to_wire
from streams.deadletter import faust_source
from streams.fleet_fold import FleetFold
from streams.intake import Intake
from streams.metrics import DetectMetrics
from streams.outputs import Outputs
from streams.planner_shell import PlannerShell
from streams.progress_feed import ProgressFeed
from streams.tailer import WorkerLogs, catch_up_retrying

PROGRESS_INTERVAL_S = 0.25  # how often the finding sources' marks are looked at (event-time planning)
NUDGE_GAP_S = 0.02  # at least this long between progress sent on writers' reports (they come in bursts)


@dataclass(frozen=True)
class PlannerParts:
    """What the planner agent and its timers use: the planner topic and shell, the fleet fold and the
    logs it must have read before deciding, the offsets and watermark read, the samples stage's lag
    and the inventory's clusters (for the progress marks)."""

    topic: faust.TopicT
    plans: PlannerShell
    fold: FleetFold
    logs: WorkerLogs
    intake: Intake
    outputs: Outputs
    metrics: DetectMetrics
    samples_lag: Callable[[], list[tuple[str, int, int]]]  # (topic, partition, behind) of the samples stage
    clusters: Callable[[], set[str]]  # the inventory's, read once it is known
    inventory_known: asyncio.Event  # set once the inventory has been read to its end
    tick_interval_s: float
    internal_partitions: int
    feed: ProgressFeed | None = None  # the declared writers' reports (``detect.progress_writers``)


def register_planner(app: faust.App, parts: PlannerParts) -> faust.types.AgentT:
    fold, plans = parts.fold, parts.plans

    @app.agent(parts.topic, name="planner")
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
            # by the hosts it had seen fail, and halted its train
            await asyncio.gather(
                catch_up_retrying(parts.logs.actions), catch_up_retrying(parts.logs.inventory)
            )
            # a failed publish ends the worker (Outputs.publish): no snapshot may keep actions the log never got
            with fold.in_flight():
                await parts.outputs.publish(plans.decide(fold.fleet, msg, event.message.partition))
                plans.settle(event.message.partition)  # only now may decided findings leave the table

    @app.timer(parts.tick_interval_s)
    async def tick() -> None:
        parts.metrics.sample_rate()
        if not plans.ordered and parts.logs.planner_ready:
            for tick in plans.ticks(fold.fleet, parts.intake.watermark):
                await parts.topic.send(key=tick.domain.encode(), value=to_wire(tick), force=True)

    @app.timer(PROGRESS_INTERVAL_S)
    async def progress() -> None:
        await send_progress(app, parts)  # sent only when a mark changed, or as a keepalive

    if parts.feed is not None:
        feed = parts.feed

        @app.task
        async def writer_reports() -> None:
            await feed.run_retrying()

        @app.task
        async def progress_on_reports() -> None:
            """A writer's report, or the record it waited for handled: the marks at once, not at the next tick."""
            while True:
                await plans.nudged.wait()
                plans.nudged.clear()
                await send_progress(app, parts)
                await asyncio.sleep(NUDGE_GAP_S)

    return planner


async def send_progress(app: faust.App, parts: PlannerParts) -> None:
    """Tell every planner partition how far the finding sources this worker owns have got."""
    consumer = getattr(app, "_consumer", None)
    if consumer is None or not parts.plans.ordered:
        return
    # Faust keeps the offsets committed at assignment only here; a partition with nothing handled
    # since is caught up when they reach its end
    committed = getattr(consumer, "_committed_offset", {})
    lag = parts.samples_lag()
    upstream_quiet = bool(lag) and all(behind == 0 for _, _, behind in lag)
    clusters = parts.clusters() if parts.inventory_known.is_set() else None
    async with parts.plans.sending:
        progress = await parts.plans.progress(
            consumer, parts.intake.last_offsets, committed, upstream_quiet=upstream_quiet, clusters=clusters
        )
        if progress is None:
            return
        value = to_wire(progress)
        for partition in range(parts.internal_partitions):
            await parts.topic.send(key=None, partition=partition, value=value, force=True)
