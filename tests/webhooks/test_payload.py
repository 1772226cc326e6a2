from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from schemas import FLEET
from webhooks import alertmanager_body, fingerprint, notification

AM_KEYS = {
    "version",
    "groupKey",
    "truncatedAlerts",
    "status",
    "receiver",
    "groupLabels",
    "commonLabels",
    "commonAnnotations",
    "externalURL",
    "alerts",
}
ALERT_KEYS = {"status", "labels", "annotations", "startsAt", "endsAt", "generatorURL", "fingerprint"}


def test_body_has_the_alertmanager_webhook_shape(alert: Callable[..., dict[str, Any]]) -> None:
    body = alertmanager_body(alert("a-1"), receiver="ops", external_url="http://fleetpulse:8080")
    assert set(body) == AM_KEYS
    assert body["version"] == "4"
    assert body["receiver"] == "ops"
    assert body["status"] == "firing"
    assert body["groupLabels"] == {"alertname": "NewRMA"}
    assert body["groupKey"] == '{}:{alertname="NewRMA"}'
    [a] = body["alerts"]
    assert set(a) == ALERT_KEYS
    assert a["labels"] == {
        "alertname": "NewRMA",
        "severity": "critical",
        "rule": "dram_uce_repeat_gpu",
        "host_id": "c0-h0001",
        "cluster": "c0",
    }
    assert a["endsAt"] == "0001-01-01T00:00:00Z"
    assert a["startsAt"].endswith("Z") and a["startsAt"].startswith("2023-11-14T22:13:20.")
    assert a["fingerprint"] == fingerprint(a["labels"])


def test_resolved_alert_has_an_end_time(alert: Callable[..., dict[str, Any]]) -> None:
    a = alertmanager_body(alert(status="resolved"))["alerts"][0]
    assert a["status"] == "resolved" and a["endsAt"] == a["startsAt"]


def test_fleet_level_alerts_carry_no_host_labels(alert: Callable[..., dict[str, Any]]) -> None:
    record = alert(alertname="DLQSurge", severity="warning")
    record["host_id"] = record["cluster"] = FLEET
    labels = alertmanager_body(record)["commonLabels"]
    assert "host_id" not in labels and "cluster" not in labels
    assert labels["alertname"] == "DLQSurge"


def test_fingerprint_is_prometheus_fnv1a() -> None:
    assert fingerprint({}) == "cbf29ce484222325"  # FNV-1a 64 offset basis: Prometheus' empty label set
    a = fingerprint({"alertname": "NewRMA", "host_id": "h1"})
    assert a == fingerprint({"host_id": "h1", "alertname": "NewRMA"})
    assert a != fingerprint({"alertname": "NewRMA", "host_id": "h2"})
    assert len(a) == 16


def test_notification_bytes_are_canonical_and_keyed_by_alert_id(alert: Callable[..., dict[str, Any]]) -> None:
    record = alert("rma-c0-h0001-3")
    n1, n2 = notification(record), notification(record)
    assert n1.body == n2.body
    assert n1.alert_id == "rma-c0-h0001-3" and n1.alertname == "NewRMA"
    assert json.loads(n1.body)["alerts"][0]["labels"]["host_id"] == "c0-h0001"
    canonical = json.dumps(json.loads(n1.body), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert n1.body == canonical.encode()
