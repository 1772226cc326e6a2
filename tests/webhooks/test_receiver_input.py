"""Hostile input to the receiver over real HTTP: every malformed request is a 4xx, never stored, never a 500."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from webhooks import ReceiverHandle, WebhookConfigError, start_receiver
from webhooks.receiver import MAX_BODY_BYTES
from webhooks.standard import standard_headers

SECRET = b"receiver-secret-of-at-least-32-bytes"
BODY = b'{"alerts":[]}'


@pytest.fixture
def receiver(tmp_path: Path):  # type: ignore[no-untyped-def]
    handle = start_receiver(0, SECRET, tmp_path / "alerts.jsonl")
    yield handle
    handle.stop()


def post(handle: ReceiverHandle, body: bytes, headers: dict[str, str]) -> httpx.Response:
    # bytes header values: httpx would refuse to encode non-ASCII str values itself
    raw = {k: v.encode("utf-8") for k, v in headers.items()}
    return httpx.post(handle.url, content=body, headers=raw, timeout=10)


def _stored(handle: ReceiverHandle) -> int:
    return handle.stats.received


def test_a_captured_request_replayed_verbatim_is_not_stored_again(receiver: ReceiverHandle) -> None:
    headers = standard_headers(SECRET, "alert-1", BODY, time.time())
    assert post(receiver, BODY, headers).json()["status"] == "accepted"
    again = post(receiver, BODY, headers)
    assert again.status_code == 200 and again.json()["status"] == "duplicate"
    assert _stored(receiver) == 1


def test_a_legacy_signature_does_not_reach_a_standard_receiver(receiver: ReceiverHandle) -> None:
    headers = {"X-Fleetpulse-Signature": f"t={int(time.time())},v1=" + "0" * 64, "Idempotency-Key": "k"}
    assert post(receiver, BODY, headers).status_code == 400
    assert _stored(receiver) == 0


HUGE = "9" * 3000


@pytest.mark.parametrize(
    "mutate",
    [
        lambda h: {**h, "webhook-signature": "v1,é" + h["webhook-signature"][4:]},
        lambda h: {**h, "webhook-signature": "v1," + "ü" * 44},
        lambda h: {**h, "webhook-timestamp": HUGE},
        lambda h: {**h, "webhook-timestamp": "-1e308"},
        lambda h: {**h, "webhook-timestamp": "nan"},
        lambda h: {**h, "webhook-id": "ä" * 10},
        lambda h: {**h, "webhook-id": "x" * 5000},
        lambda h: {**h, "webhook-signature": " ".join([h["webhook-signature"]] * 200)},
    ],
    ids=[
        "non-ascii-mac",
        "all-non-ascii",
        "huge-timestamp",
        "float-timestamp",
        "nan-timestamp",
        "non-ascii-id",
        "long-id",
        "many-signatures",
    ],
)
def test_malformed_standard_headers_are_400(receiver: ReceiverHandle, mutate) -> None:  # type: ignore[no-untyped-def]
    headers = mutate(standard_headers(SECRET, "alert-1", BODY, time.time()))
    r = post(receiver, BODY, headers)
    assert r.status_code == 400, r.text
    assert _stored(receiver) == 0


@pytest.mark.parametrize(
    "body",
    [b"[" * 100_000 + b"]" * 100_000, b'{"x": NaN}', b'{"x": -Infinity}', b"\xff\xfe", b"{"],
    ids=["deeply-nested", "nan", "infinity", "not-utf8", "truncated"],
)
def test_signed_bodies_that_are_not_strict_json_are_400(receiver: ReceiverHandle, body: bytes) -> None:
    r = post(receiver, body, standard_headers(SECRET, "alert-1", body, time.time()))
    assert r.status_code == 400, r.text
    assert _stored(receiver) == 0


def test_the_body_limit_is_explicit(receiver: ReceiverHandle) -> None:
    body = b'{"pad": "' + b"x" * MAX_BODY_BYTES + b'"}'
    r = post(receiver, body, standard_headers(SECRET, "alert-1", body, time.time()))
    assert r.status_code == 413
    assert _stored(receiver) == 0


@pytest.mark.parametrize("tolerance_s", [float("inf"), float("nan"), 0.0, 86_400.0])
def test_an_unbounded_tolerance_is_refused(tmp_path: Path, tolerance_s: float) -> None:
    with pytest.raises(WebhookConfigError, match="tolerance"):
        start_receiver(0, SECRET, tmp_path / "a.jsonl", tolerance_s=tolerance_s)


@pytest.mark.parametrize("secret", [b"change-me", b"short", b"x" * 40, b"change-me" * 4])
def test_a_weak_secret_is_refused_at_start(tmp_path: Path, secret: bytes) -> None:
    with pytest.raises(WebhookConfigError, match="cannot be used"):
        start_receiver(0, secret, tmp_path / "a.jsonl")
