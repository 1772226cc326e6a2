"""AlertRaised records as Alertmanager webhook bodies (``version: "4"``), one alert per notification.

The body is serialised once, canonically, and stored in the outbox: every retry sends the
same bytes, so receivers can hash or sign-check them consistently.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, NamedTuple
from urllib.parse import quote

from schemas import FLEET

ZERO_TIME = "0001-01-01T00:00:00Z"  # Alertmanager's endsAt of a firing alert

_FNV_OFFSET = 14695981039346656037
_FNV_PRIME = 1099511628211
_SEPARATOR = 0xFF


class Notification(NamedTuple):
    """One outbox entry: the idempotency key, the alert's name and the exact body to POST."""

    alert_id: str
    alertname: str
    body: bytes


def fingerprint(labels: Mapping[str, str]) -> str:
    """Prometheus' label-set fingerprint (FNV-1a 64 over sorted name/value pairs), as 16 hex digits."""
    h = _FNV_OFFSET
    for name in sorted(labels):
        for part in (name, labels[name]):
            for byte in part.encode():
                h = ((h ^ byte) * _FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
            h = ((h ^ _SEPARATOR) * _FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def rfc3339(ts_ms: int) -> str:
    """Epoch milliseconds as RFC 3339 UTC with millisecond precision."""
    moment = datetime.fromtimestamp(ts_ms / 1000, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def alert_labels(record: Mapping[str, Any]) -> dict[str, str]:
    """The alert's labels plus ``alertname``, ``severity`` and, for host alerts, ``host_id``/``cluster``."""
    payload = record["payload"]
    labels = {str(k): str(v) for k, v in (payload.get("labels") or {}).items()}
    labels["alertname"] = payload["alertname"]
    labels.setdefault("severity", payload["severity"])
    for key in ("host_id", "cluster"):
        if record.get(key) and record[key] != FLEET:
            labels.setdefault(key, record[key])
    return labels


def console_link(record: Mapping[str, Any], console_url: str) -> str:
    """Where a person looks into the alert: the detector's host page, or its domains for a fleet alert."""
    if not console_url:
        return ""
    base = console_url.rstrip("/")
    host = record.get("host_id")
    if host and host != FLEET:
        return f"{base}/hosts/{quote(str(host), safe='')}"
    return f"{base}/domains"


def alertmanager_body(
    record: Mapping[str, Any], *, receiver: str = "fleetpulse", external_url: str = "", console_url: str = ""
) -> dict[str, Any]:
    """The Alertmanager webhook JSON object for one AlertRaised record (envelope + payload).

    ``generatorURL`` is the record's own, else a link into the detector's API at ``console_url``.
    """
    payload = record["payload"]
    status = payload.get("status") or "firing"
    labels = alert_labels(record)
    annotations = {str(k): str(v) for k, v in (payload.get("annotations") or {}).items()}
    alertname = labels["alertname"]
    alert = {
        "status": status,
        "labels": labels,
        "annotations": annotations,
        "startsAt": rfc3339(record["ts"]),
        "endsAt": rfc3339(record["ts"]) if status == "resolved" else ZERO_TIME,
        "generatorURL": payload.get("generator_url") or console_link(record, console_url),
        "fingerprint": fingerprint(labels),
    }
    group_labels = {"alertname": alertname}
    if "group_key" in labels:  # one group per incident: its firing and resolved notifications share it
        group_labels["group_key"] = labels["group_key"]
    group = ",".join(f'{k}="{v}"' for k, v in sorted(group_labels.items()))
    return {
        "version": "4",
        "groupKey": f"{{}}:{{{group}}}",
        "truncatedAlerts": 0,
        "status": status,
        "receiver": receiver,
        "groupLabels": group_labels,
        "commonLabels": labels,
        "commonAnnotations": annotations,
        "externalURL": external_url,
        "alerts": [alert],
    }


def encode_body(body: Mapping[str, Any] | list[Any]) -> bytes:
    """Canonical JSON bytes (sorted keys, no spaces, UTF-8)."""
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def notification(
    record: Mapping[str, Any], *, receiver: str = "fleetpulse", external_url: str = "", console_url: str = ""
) -> Notification:
    """The outbox entry for an AlertRaised record; the idempotency key is ``alert_id`` (else ``event_id``)."""
    payload = record["payload"]
    alert_id = payload.get("alert_id") or record["event_id"]
    body = alertmanager_body(record, receiver=receiver, external_url=external_url, console_url=console_url)
    return Notification(alert_id, payload["alertname"], encode_body(body))
