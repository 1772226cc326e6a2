"""Where a detect worker's results go: findings (and on to their domain's planner), actions, alerts, dead letters.

Every output is counted in the worker's metrics; a dead-letter surge raises an alert; a publish of
actions the broker refuses ends the worker (its fleet state is then ahead of the log).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from schemas import Codec, DecodeError
from streams.alerts import DlqSurge, alerts_for
from streams.core.actions import Action
from streams.core.errors import InvalidRecordError
from streams.core.findings import Finding
from streams.core.inventory import Inventory
from streams.core.messages import PlanFinding, to_wire
from streams.core.planning.admission import route
from streams.deadletter import SourceRecord, dead_letter, faust_source, reason_label
from streams.fatal import end_worker
from streams.metrics import DetectMetrics
from streams.tailer import LogTailer, catch_up_retrying

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OutputTopics:
    """The topics a worker writes: the four fleet topics it owns and its planner's repartition topic."""

    findings: Any
    actions: Any
    alerts: Any
    dlq: Any
    planner: Any


class Outputs:
    """Sends a worker's results, counted in its metrics."""

    def __init__(
        self,
        topics: OutputTopics,
        codec: Codec,
        metrics: DetectMetrics,
        dlq_surge: DlqSurge,
        *,
        clock: Callable[[], float],
        inventory: Inventory,
        inventory_tailer: LogTailer,
        exit_now: Callable[[int], None],
    ) -> None:
        """``exit_now``: ends the process when a publish fails (``streams.fatal``)."""
        self.topics, self.codec, self.metrics, self.dlq_surge = topics, codec, metrics, dlq_surge
        self.clock, self.inventory, self.inventory_tailer, self.exit_now = (
            clock,
            inventory,
            inventory_tailer,
            exit_now,
        )

    async def send_dead_letter(self, exc: DecodeError | InvalidRecordError, src: SourceRecord) -> Any:
        """Send the record to the DLQ with its reason; returns the send's future (await it to know it landed)."""
        arrived_ms = src.timestamp_ms if src.timestamp_ms else int(self.clock() * 1000)
        record = dead_letter(
            exc,
            topic=src.topic,
            partition=src.partition,
            offset=src.offset,
            key=src.key,
            value=src.value,
            timestamp_ms=arrived_ms,
        )
        sent = await self.topics.dlq.send(key=record["event_id"].encode(), value=self.codec.encode(record))
        self.metrics.dead_letters.labels(src.topic, reason_label(exc)).inc()
        log.info("dead-lettered %s[%d]@%d: %s", src.topic, src.partition, src.offset, exc.reason)
        surge = self.dlq_surge.observe(arrived_ms, src.topic, src.partition, src.offset)
        if surge is not None:
            await self._send_alert(surge)
        return sent

    async def send_finding(self, finding: Finding, source: Any) -> None:
        """Publish a finding, and send it straight to its domain's planner (ahead of the source's progress).

        ``source`` is the message that raised it: a finding the planner could not act on is
        dead-lettered under that message's coordinates.
        """
        record = finding.to_record()
        value = self.codec.encode(record)
        await self.topics.findings.send(key=finding.host_id.encode(), value=value)
        self.metrics.findings.labels(finding.detector, finding.rule).inc()
        await catch_up_retrying(self.inventory_tailer)
        way = route(record, self.inventory.domain_of)
        if way.domain is None:
            refused = InvalidRecordError(
                str(way.refused), host_id=finding.host_id, event_type="FindingRaised"
            )
            await self.send_dead_letter(refused, faust_source(source, value))
            return
        await self.topics.planner.send(
            key=way.domain.encode(), value=to_wire(PlanFinding(way.domain, record)), force=True
        )

    async def _send_alert(self, record: dict[str, Any], *, now: bool = False) -> Any:
        self.metrics.alerts.labels(record["payload"]["alertname"]).inc()
        return await self.topics.alerts.send(
            key=record["payload"]["alert_id"].encode(), value=self.codec.encode(record), force=now
        )

    async def publish(self, actions: list[Action]) -> None:
        """Send actions (and the alerts they raise) now and wait until the broker has them all.

        Each action's alerts go first: nothing derives alerts from the log again, so an action
        that landed without its alert (a crash between the two) would never page anyone, while
        an alert sent again after a crash has the same id and is dropped as a repeat downstream.
        The actions are already applied to the fleet state: if the broker does not take them all,
        the worker ends (``streams.fatal``) and, started again, folds the log that has them or not.
        """
        try:
            pending = []
            for action in actions:
                for alert in alerts_for(action):
                    pending.append(await self._send_alert(alert, now=True))
                pending.append(
                    await self.topics.actions.send(
                        key=action.domain.encode(), value=self.codec.encode(action.to_record()), force=True
                    )
                )
                self.metrics.actions.labels(action.kind).inc()
            if pending:
                await asyncio.gather(*pending)
        except Exception as exc:  # noqa: BLE001 - whatever the cause, the fold is now ahead of the log
            end_worker(f"publishing {len(actions)} actions failed ({exc!r})", self.exit_now)
            raise
