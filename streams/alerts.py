"""AlertRaised records for people: derived purely from actions (NewRMA, NicReplacement, CableReplacement,
SlowHost, TrainHalted) and DLQ surges.

``alert_id`` is deterministic (the idempotency key the webhook dispatcher and receivers
dedup on), so an alert re-derived after a restart is the same alert.

One page per incident, Alertmanager-style: a host's alerts carry a ``group_key`` label naming
the operation that took it out (host and the finding that opened it). The planner absorbs
further findings the operation covers (the same kind or a weaker one) while it is open, so they
page no one (``RepeatAfterRepair`` only after the host returned); when the host returns to service
the group gets a ``resolved`` notification with the same group key.
"""

from __future__ import annotations

import bisect
from typing import Any

from schemas import FLEET, AlertRaised
from streams.core.actions import REQUEST_KIND, Action
from streams.core.ids import alert_id


def _alert(
    alertname: str,
    key: str,
    severity: str,
    ts: int,
    host_id: str,
    cluster: str,
    labels: dict[str, str],
    summary: str,
    status: str = "firing",
) -> dict[str, Any]:
    aid = alert_id(alertname, key) if status == "firing" else alert_id(alertname, status, key)
    return AlertRaised(
        event_id=aid,
        host_id=host_id,
        cluster=cluster,
        ts=ts,
        payload={
            "alert_id": aid,
            "alertname": alertname,
            "severity": severity,
            "status": status,
            "labels": {"alertname": alertname, **labels},
            "annotations": {"summary": summary},
            "generator_url": None,
        },
    ).to_record()


# Work a person does by hand: the request that opens it (``REQUEST_KIND``) -> (operation, alertname, severity).
HANDS_ON = {
    REQUEST_KIND[operation]: (operation, alertname, severity)
    for operation, alertname, severity in (
        ("rma", "NewRMA", "critical"),
        ("nic_replacement", "NicReplacement", "warning"),
        ("cable_replacement", "CableReplacement", "warning"),
    )
}
_PART = {"rma": "RMA opened", "nic_replacement": "NIC replacement", "cable_replacement": "cable replacement"}


def group_key(action: Action) -> str:
    """The incident a host action belongs to: the host and the finding that opened its operation."""
    return f"{action.host_id}/{action.finding_id or action.action_id}"


def alerts_for(action: Action) -> list[dict[str, Any]]:
    """The alerts a newly recorded action raises (none for most kinds)."""
    labels = {
        "host_id": action.host_id,
        "cluster": action.cluster,
        "domain": action.domain,
        "rule": action.rule or "",
    }
    if action.kind == "returned":
        return _resolved(action, labels)
    if action.kind in HANDS_ON:
        operation, alertname, severity = HANDS_ON[action.kind]
        what = _PART[operation] + (" for" if operation == "rma" else " needed on")
        why = f"{what} {action.host_id} ({action.rule}) in domain {action.domain}"
        return [_paged(alertname, action, labels, why, severity)]
    if action.kind == "suspected" and action.rule == "slow_host":
        return [
            _alert(
                "SlowHost",
                action.finding_id or action.action_id,
                "warning",
                action.ts,
                action.host_id,
                action.cluster,
                {**labels, "group_key": group_key(action)},
                f"{action.host_id} is slower than its peers: {action.reason}",
            )
        ]
    if action.kind == "escalated":
        why = (
            f"{action.host_id} failed again soon after a repair; replace the host or chassis: {action.reason}"
        )
        return [_paged("RepeatAfterRepair", action, labels, why)]
    if action.kind == "retired":
        why = f"{action.host_id} retired, its repairs kept failing: {action.reason}"
        return [_paged("HostRetired", action, labels, why)]
    if action.kind == "campaign_halted":  # a change campaign's safety test found the new version worse
        return [
            _alert(
                "CampaignHalted",
                action.action_id,
                "critical",
                action.ts,
                FLEET,
                FLEET,
                {
                    **labels,
                    "host_id": FLEET,
                    "campaign_id": action.finding_id or "",
                    "change": action.rule or "",
                },
                f"change campaign {action.finding_id} ({action.rule}) halted: {action.reason}",
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


def _paged(
    alertname: str, action: Action, labels: dict[str, str], summary: str, severity: str = "critical"
) -> dict[str, Any]:
    """A page about one host, grouped with the incident (operation) it belongs to."""
    return _alert(
        alertname,
        action.action_id,
        severity,
        action.ts,
        action.host_id,
        action.cluster,
        {**labels, "group_key": group_key(action)},
        summary,
    )


def _resolved(action: Action, labels: dict[str, str]) -> list[dict[str, Any]]:
    """The ``resolved`` notifications of the alerts that paged for the operation the host returned from."""
    paged = [  # (alertname, severity) as they fired: the same labels give Alertmanager the same fingerprint
        (name, severity) for operation, name, severity in HANDS_ON.values() if action.operation == operation
    ]
    if action.rule == "slow_host":
        paged.append(("SlowHost", "warning"))
    return [
        _alert(
            name,
            action.action_id,
            severity,
            action.ts,
            action.host_id,
            action.cluster,
            {**labels, "group_key": group_key(action)},
            f"{action.host_id} is back in service after {action.operation} ({action.rule})",
            status="resolved",
        )
        for name, severity in paged
    ]


class DlqSurge:
    """Counts dead letters by the time each record reached Kafka; one alert per surge.

    Not the worker's wall clock: a worker catching up on a backlog, or replaying after a crash,
    meets days of dead letters within seconds and would page a surge that never happened. Not
    the payload's event time either: a record that cannot be decoded has none, and a wrong one
    may be why it was refused. The record's Kafka timestamp is when it arrived, whatever the
    order partitions are read in — as long as a partition is read less than ``HORIZON_WINDOWS``
    windows behind the newest dead letter seen (older arrivals are dropped: bounded memory).
    """

    HORIZON_WINDOWS = 60

    def __init__(self, count: int, window_ms: int) -> None:
        self.count = count
        self.window_ms = window_ms
        self._times: list[int] = []  # arrival times, sorted; older than the horizon: dropped
        self._newest = 0

    def observe(self, arrived_ms: int, topic: str, partition: int, offset: int) -> dict[str, Any] | None:
        bisect.insort(self._times, arrived_ms)
        self._newest = max(self._newest, arrived_ms)
        horizon = self._newest - self.HORIZON_WINDOWS * self.window_ms
        del self._times[: bisect.bisect_right(self._times, horizon)]
        if self._densest_window_around(arrived_ms) < self.count:
            return None
        self._times.clear()
        return _alert(
            "DLQSurge",
            f"{topic}/{partition}/{offset}",
            "warning",
            arrived_ms,
            FLEET,
            FLEET,
            {"host_id": FLEET, "cluster": FLEET, "domain": "", "rule": "dlq_surge", "topic": topic},
            f"{self.count} records dead-lettered within {self.window_ms / 1000:.0f} s (last: {topic}[{partition}]@{offset})",
        )

    def _densest_window_around(self, at_ms: int) -> int:
        """The most arrivals in one window (``window_ms`` long) that contains ``at_ms``."""
        times = self._times
        lo = bisect.bisect_right(times, at_ms - self.window_ms)
        hi = bisect.bisect_left(times, at_ms + self.window_ms)
        best, first = 0, lo
        for last in range(lo, hi):
            while times[last] - times[first] >= self.window_ms:
                first += 1
            best = max(best, last - first + 1)
        return best
