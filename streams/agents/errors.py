"""The errors agent: repeat offenders keyed by host, and the errors the campaigns' safety test counts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import faust

from streams.core.classify import classify
from streams.core.planning.sources import SourceTimes
from streams.core.policy import Policy
from streams.core.stages import repeat_step
from streams.core.state import KeyedState
from streams.fleet_fold import FleetFold
from streams.intake import Intake
from streams.metrics import DetectMetrics
from streams.outputs import Outputs
from streams.trains.error_days import ErrorDays


@dataclass(frozen=True)
class ErrorsParts:
    """What the errors agent uses: its topic, the repeat rule's keyed state (per host), the fleet fold
    and the hosts' domains (for the safety test's counts), and where its reading time is told."""

    topic: faust.TopicT
    policy: Policy
    intake: Intake
    repeat: KeyedState  # host -> HostState.stored()
    fold: FleetFold
    domain_of: Callable[[str], str]
    outputs: Outputs
    metrics: DetectMetrics
    source_times: SourceTimes  # the planner's marks of how far this source has got


def register_errors(app: faust.App, parts: ErrorsParts) -> faust.types.AgentT:
    policy, intake, fold = parts.policy, parts.intake, parts.fold
    error_days = ErrorDays(policy, parts.domain_of)  # errors the campaigns' safety test counts

    @app.agent(parts.topic, name="errors")
    async def errors(stream: faust.StreamT) -> None:
        async for event in stream.events():
            record = await intake.valid_record(event)
            if record is None:  # dead-lettered: nothing more will come of it
                parts.source_times.errors_done(event.message.partition, event.message.offset)
                continue
            msg = event.message
            signal = classify(record, policy)
            if signal is not None and (counted := error_days.observe(fold.fleet, signal)) is not None:
                await parts.outputs.publish([counted])
            step = repeat_step(parts.repeat, signal, (msg.partition, msg.offset), policy)
            if step.late:
                parts.metrics.late.labels("errors").inc()
            if step.finding is not None:
                await parts.outputs.send_finding(step.finding, msg)
            parts.source_times.errors_read(msg.partition, record["ts"], msg.offset)

    return errors
