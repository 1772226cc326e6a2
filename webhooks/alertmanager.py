"""Alerts pushed into an existing Alertmanager through its ``/api/v2/alerts``, as Prometheus pushes them.

The outbox keeps one body per alert (the Alertmanager webhook shape of ``webhooks.payload``);
a delivery to an Alertmanager sends the same alert as the API's list of postable alerts, derived
from those stored bytes, so every retry of it sends the same bytes too. Prometheus re-sends a
firing alert every minute; fleetpulse sends it once, so a firing alert ends ``ttl_s`` after it
started unless its ``resolved`` notification (same labels, an ``endsAt``) ends it first.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta

from webhooks.outbox import Delivery
from webhooks.payload import encode_body

API_PATH = "/api/v2/alerts"


def api_url(base: str) -> str:
    """The alerts endpoint of the Alertmanager at ``base`` (e.g. ``http://alertmanager:9093``)."""
    return base.rstrip("/") + API_PATH


def _plus(stamp: str, seconds: float) -> str:
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone(UTC) + timedelta(seconds=seconds)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def postable_alerts(webhook_body: bytes, ttl_s: float) -> bytes:
    """The ``/api/v2/alerts`` body (a JSON list) for a stored webhook body."""
    body = json.loads(webhook_body)
    out = []
    for a in body["alerts"]:
        resolved = a["status"] == "resolved"
        alert = {
            "labels": a["labels"],
            "annotations": a["annotations"],
            "startsAt": a["startsAt"],
            "endsAt": a["endsAt"] if resolved else _plus(a["startsAt"], ttl_s),
        }
        if a.get("generatorURL"):
            alert["generatorURL"] = a["generatorURL"]
        out.append(alert)
    return encode_body(out)


def body_for(targets: Iterable[str], ttl_s: float) -> Callable[[Delivery], bytes]:
    """What a delivery sends: the postable list to an Alertmanager endpoint in ``targets``, else the stored body."""
    endpoints = frozenset(targets)

    def body(d: Delivery) -> bytes:
        return postable_alerts(d.body, ttl_s) if d.url in endpoints else d.body

    return body
