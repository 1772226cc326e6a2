"""The webhook receiver over real HTTP on a free port (no Kafka): verify, dedup, JSONL, stats, restart.

Requests are signed the Standard Webhooks way (the only scheme).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest

from webhooks import ReceiverHandle, WebhookError, start_receiver
from webhooks.standard import standard_headers

SECRET = b"receiver-secret-of-at-least-32-bytes"
BODY = b'{"version":"4","alerts":[{"labels":{"alertname":"NewRMA"}}]}'


def signed(key: str, body: bytes = BODY, secret: bytes = SECRET, at: float | None = None) -> dict[str, str]:
    return standard_headers(secret, key, body, time.time() if at is None else at)


def post(handle: ReceiverHandle, body: bytes, headers: dict[str, str] | None) -> httpx.Response:
    return httpx.post(
        handle.url, content=body, headers={"Content-Type": "application/json", **(headers or {})}, timeout=5
    )


@pytest.fixture
def receiver(tmp_path: Path):  # type: ignore[no-untyped-def]
    handle = start_receiver(0, SECRET, tmp_path / "alerts.jsonl")
    yield handle
    handle.stop()


def test_accepts_signed_alerts_and_appends_them(receiver: ReceiverHandle, tmp_path: Path) -> None:
    r = post(receiver, BODY, signed("k1"))
    assert r.status_code == 200 and r.json()["status"] == "accepted"
    [line] = (tmp_path / "alerts.jsonl").read_text().splitlines()
    stored = json.loads(line)
    assert stored["idempotency_key"] == "k1" and stored["body"] == json.loads(BODY)


def test_duplicate_key_is_acknowledged_but_not_stored_again(receiver: ReceiverHandle, tmp_path: Path) -> None:
    for _ in range(3):
        r = post(receiver, BODY, signed("k1"))
        assert r.status_code == 200
    assert r.json()["status"] == "duplicate"
    assert len((tmp_path / "alerts.jsonl").read_text().splitlines()) == 1
    stats = httpx.get(receiver.url + "stats").json()
    assert stats == {"received": 1, "duplicates": 2, "rejected": 0, "stored": 1}


def _without(headers: dict[str, str], name: str) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k != name}


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        (lambda: signed("k", secret=b"w" + SECRET), 401),
        (lambda: signed("k", at=time.time() - 3600), 401),  # replay of an old request
        (lambda: signed("k", body=b"{}"), 401),  # signature of another body
        (lambda: {**signed("k"), "webhook-id": "k2"}, 401),  # a captured request under a new id
        (lambda: None, 400),
        (lambda: _without(signed("k"), "webhook-id"), 400),
    ],
    ids=["wrong-secret", "old-timestamp", "other-body", "replayed-under-new-id", "unsigned", "no-id"],
)
def test_rejections(receiver: ReceiverHandle, tmp_path: Path, headers, status) -> None:  # type: ignore[no-untyped-def]
    r = post(receiver, BODY, headers())
    assert r.status_code == status
    assert receiver.stats.rejected == 1 and receiver.stats.received == 0
    assert not (tmp_path / "alerts.jsonl").exists()


def test_restart_on_the_same_port_remembers_keys(tmp_path: Path) -> None:
    out = tmp_path / "alerts.jsonl"
    first = start_receiver(0, SECRET, out)
    port = first.port
    assert post(first, BODY, signed("k1")).status_code == 200
    first.stop()
    with pytest.raises(httpx.ConnectError):
        post(first, BODY, signed("k2"))
    with start_receiver(port, SECRET, out) as second:
        assert post(second, BODY, signed("k1")).json()["status"] == "duplicate"
        assert post(second, BODY, signed("k2")).json()["status"] == "accepted"
        assert second.stats.stored == 2
    assert [json.loads(x)["idempotency_key"] for x in out.read_text().splitlines()] == ["k1", "k2"]


def test_port_in_use_is_a_clear_error(receiver: ReceiverHandle, tmp_path: Path) -> None:
    with pytest.raises(WebhookError, match="failed to start"):
        start_receiver(receiver.port, SECRET, tmp_path / "other.jsonl")
