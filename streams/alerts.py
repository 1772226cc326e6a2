"""AlertRaised records for people: derived purely from actions (NewRMA, SlowHost, TrainHalted) and DLQ surges.

``alert_id`` is deterministic (the idempotency key the webhook dispatcher and receivers
dedup on), so an alert re-derived after a restart is the same alert.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from schemas import FLEET, AlertRaised
from streams.ids import alert_id
from streams.lifecycle import Action


def _alert(
    alertname: str,
    key: str,
    severity: str,
    ts: int,
    host_id: str,
    cluster: str,
    labels: dict[str, str],
    summary: str,
) -> dict[str, Any]:
    aid = alert_id(alertname, key)
    return AlertRaised(
        event_id=aid,
        host_id=host_id,
        cluster=cluster,
        ts=ts,
        payload={
            "alert_id": aid,
            "alertname": alertname,
            "severity": severity,
            "status": "firing",
            "labels": {"alertname": alertname, **labels},
            "annotations": {"summary": summary},
            "generator_url": None,
        },
    ).to_record()


def alerts_for(action: Action) -> list[dict[str, Any]]:
    """The alerts a newly recorded action raises (none for most kinds)."""
    labels = {
        "host_id": action.host_id,
        "cluster": action.cluster,
        "domain": action.domain,
        "rule": action.rule or "",
    }
    if action.kind == "rma_opened":
        return [
            _alert(
                "NewRMA",
                action.action_id,
                "critical",
                action.ts,
                action.host_id,
                action.cluster,
                labels,
                f"RMA opened for {action.host_id} ({action.rule}) in domain {action.domain}",
            )
        ]
    if action.kind == "suspected" and action.rule == "slow_host":
        return [
            _alert(
                "SlowHost",
                action.finding_id or action.action_id,
                "warning",
                action.ts,
                action.host_id,
                action.cluster,
                labels,
                f"{action.host_id} is slower than its peers: {action.reason}",
            )
        ]
    if action.kind == "train_halted":
        return [
            _alert(
                "TrainHalted",
                action.action_id,
                "critical",
                action.ts,
                FLEET,
                FLEET,
                {**labels, "host_id": FLEET},
                f"maintenance train halted in domain {action.domain}: {action.reason}",
            )
        ]
    return []


class DlqSurge:
    """Counts dead letters in a sliding wall-clock window; one alert per surge."""

    def __init__(self, count: int, window_ms: int) -> None:
        self.count = count
        self.window_ms = window_ms
        self._times: deque[int] = deque()

    def observe(self, now_ms: int, topic: str, partition: int, offset: int) -> dict[str, Any] | None:
        self._times.append(now_ms)
        while self._times and self._times[0] <= now_ms - self.window_ms:
            self._times.popleft()
        if len(self._times) < self.count:
            return None
        self._times.clear()
        return _alert(
            "DLQSurge",
            f"{topic}/{partition}/{offset}",
            "warning",
            now_ms,
            FLEET,
            FLEET,
            {"host_id": FLEET, "cluster": FLEET, "domain": "", "rule": "dlq_surge", "topic": topic},
            f"{self.count} records dead-lettered within {self.window_ms / 1000:.0f} s (last: {topic}[{partition}]@{offset})",
        )
