"""The webhook receiver over real HTTP on a free port (no Kafka): verify, dedup, JSONL, stats, restart."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest

from streams.webhooks import ReceiverHandle, WebhookError, sign, start_receiver

SECRET = b"receiver-secret"
BODY = b'{"version":"4","alerts":[{"labels":{"alertname":"NewRMA"}}]}'


def post(handle: ReceiverHandle, body: bytes, key: str | None, signature: str | None) -> httpx.Response:
    headers = {"Content-Type": "application/json"}
    if key is not None:
        headers["Idempotency-Key"] = key
    if signature is not None:
        headers["X-Fleetpulse-Signature"] = signature
    return httpx.post(handle.url, content=body, headers=headers, timeout=5)


@pytest.fixture
def receiver(tmp_path: Path):  # type: ignore[no-untyped-def]
    handle = start_receiver(0, SECRET, tmp_path / "alerts.jsonl")
    yield handle
    handle.stop()


def test_accepts_signed_alerts_and_appends_them(receiver: ReceiverHandle, tmp_path: Path) -> None:
    r = post(receiver, BODY, "k1", sign(SECRET, BODY, time.time()))
    assert r.status_code == 200 and r.json()["status"] == "accepted"
    [line] = (tmp_path / "alerts.jsonl").read_text().splitlines()
    stored = json.loads(line)
    assert stored["idempotency_key"] == "k1" and stored["body"] == json.loads(BODY)


def test_duplicate_key_is_acknowledged_but_not_stored_again(receiver: ReceiverHandle, tmp_path: Path) -> None:
    for _ in range(3):
        r = post(receiver, BODY, "k1", sign(SECRET, BODY, time.time()))
        assert r.status_code == 200
    assert r.json()["status"] == "duplicate"
    assert len((tmp_path / "alerts.jsonl").read_text().splitlines()) == 1
    stats = httpx.get(receiver.url + "stats").json()
    assert stats == {"received": 1, "duplicates": 2, "rejected": 0, "stored": 1}


@pytest.mark.parametrize(
    ("signature", "key", "status"),
    [
        (lambda: sign(b"wrong", BODY, time.time()), "k", 401),
        (lambda: sign(SECRET, BODY, time.time() - 3600), "k", 401),  # replay of an old request
        (lambda: sign(SECRET, b"{}", time.time()), "k", 401),  # signature of another body
        (lambda: None, "k", 401),
        (lambda: sign(SECRET, BODY, time.time()), None, 400),
    ],
    ids=["wrong-secret", "old-timestamp", "other-body", "unsigned", "no-idempotency-key"],
)
def test_rejections(receiver: ReceiverHandle, tmp_path: Path, signature, key, status) -> None:  # type: ignore[no-untyped-def]
    r = post(receiver, BODY, key, signature())
    assert r.status_code == status
    assert receiver.stats.rejected == 1 and receiver.stats.received == 0
    assert not (tmp_path / "alerts.jsonl").exists()


def test_restart_on_the_same_port_remembers_keys(tmp_path: Path) -> None:
    out = tmp_path / "alerts.jsonl"
    first = start_receiver(0, SECRET, out)
    port = first.port
    assert post(first, BODY, "k1", sign(SECRET, BODY, time.time())).status_code == 200
    first.stop()
    with pytest.raises(httpx.ConnectError):
        post(first, BODY, "k2", sign(SECRET, BODY, time.time()))
    with start_receiver(port, SECRET, out) as second:
        assert post(second, BODY, "k1", sign(SECRET, BODY, time.time())).json()["status"] == "duplicate"
        assert post(second, BODY, "k2", sign(SECRET, BODY, time.time())).json()["status"] == "accepted"
        assert second.stats.stored == 2
    assert [json.loads(x)["idempotency_key"] for x in out.read_text().splitlines()] == ["k1", "k2"]


def test_port_in_use_is_a_clear_error(receiver: ReceiverHandle, tmp_path: Path) -> None:
    with pytest.raises(WebhookError, match="failed to start"):
        start_receiver(receiver.port, SECRET, tmp_path / "other.jsonl")
