"""The receiver against slow and strange senders: read timeouts, strict numbers, private files."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from ground.errors import ConfigError
from ground.launch import fleetpulse_argv
from webhooks import WebhookConfigError
from webhooks.receiver import ReceiverHandle, WebhookReceiver
from webhooks.standard import standard_headers

SECRET = b"receiver-secret-of-at-least-32-bytes"


def start(tmp_path: Path, **kwargs: float) -> ReceiverHandle:
    receiver = WebhookReceiver(SECRET, tmp_path / "out" / "alerts.jsonl", **kwargs)  # type: ignore[arg-type]
    return ReceiverHandle(receiver, "127.0.0.1", 0).start()


def signed_post(handle: ReceiverHandle, body: bytes, msg_id: str = "a-1") -> httpx.Response:
    headers = standard_headers(SECRET, msg_id, body, time.time())
    return httpx.post(handle.url, content=body, headers=headers, timeout=10)


@pytest.mark.parametrize(
    "body",
    [b'{"a":1e999}', b'{"a":-1e400}', b'{"a":"\\ud800"}', b'{"a":["x","\\udfff"]}', b'{"\\udc00":1}'],
    ids=["1e999", "-1e400", "lone-high", "lone-low-in-list", "lone-in-key"],
)
def test_numbers_beyond_a_double_and_lone_surrogates_are_400(tmp_path: Path, body: bytes) -> None:
    """Finding 8: a signed ``{"a":1e999}`` was stored as Infinity; a lone surrogate was accepted."""
    handle = start(tmp_path)
    try:
        r = signed_post(handle, body)
        assert r.status_code == 400, r.text
        assert handle.stats.received == 0
    finally:
        handle.stop()


def test_a_surrogate_pair_and_big_finite_numbers_are_fine(tmp_path: Path) -> None:
    handle = start(tmp_path)
    try:
        assert signed_post(handle, b'{"a":"\\ud83d\\ude00","b":1e308}').status_code == 200
    finally:
        handle.stop()


def _half_sent(port: int, payload: bytes, wait_s: float) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=wait_s) as sock:
        sock.sendall(payload)
        try:
            return sock.recv(4096)  # b"" when the receiver closes the connection
        except TimeoutError:
            return b"still open"


def test_a_half_sent_request_head_is_closed(tmp_path: Path) -> None:
    """Finding 7: half-sent requests stayed open for 200 s and more."""
    handle = start(tmp_path, header_timeout_s=1.0)
    try:
        begun = time.monotonic()
        got = _half_sent(handle.port, b"POST / HTTP/1.1\r\nHost: x\r\nwebhook-id: a", 8)
        assert got != b"still open" and time.monotonic() - begun < 6
    finally:
        handle.stop()


def test_a_half_sent_body_is_408(tmp_path: Path) -> None:
    handle = start(tmp_path, body_timeout_s=1.0)
    try:
        head = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"
        got = _half_sent(handle.port, head, 8)
        assert got.startswith(b"HTTP/1.1 408"), got
    finally:
        handle.stop()


def test_the_default_timeouts_are_bounded() -> None:
    receiver = WebhookReceiver(SECRET, Path("unused.jsonl"))
    assert 0 < receiver.header_timeout_s <= 30 and 0 < receiver.body_timeout_s <= 30
    assert receiver.runner()._kwargs["keepalive_timeout"] == receiver.header_timeout_s


def test_the_output_is_private(tmp_path: Path) -> None:
    """Finding 14: receiver output was 0644 in a 0755 folder."""
    handle = start(tmp_path)
    try:
        assert signed_post(handle, b'{"alerts":[]}').status_code == 200
    finally:
        handle.stop()
    out = tmp_path / "out" / "alerts.jsonl"
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert stat.S_IMODE(out.parent.stat().st_mode) == 0o700
    assert json.loads(out.read_text())["body"] == {"alerts": []}


@pytest.mark.parametrize(
    "secret",
    [
        b"passwordpasswordpasswordpassword",
        b"a",
        b"abcabcabcabcabcabcabcabcabcabcabcabc",
        b"0123456701234567012345670123456",
    ],
)
def test_weak_webhook_secrets_are_refused(secret: bytes) -> None:
    """Finding 9: ``passwordpasswordpasswordpassword`` passed the secret check."""
    with pytest.raises(WebhookConfigError, match="cannot be used"):
        WebhookReceiver(secret, Path("unused.jsonl"))


def test_a_non_utf8_webhook_secret_is_one_line(tmp_path: Path) -> None:
    """Finding 10: a non-UTF-8 secret gave a 36-line traceback."""
    env = {**os.environb, b"FLEETPULSE_WEBHOOKS__SECRET": b"s\xff" * 40}
    argv = fleetpulse_argv("receiver", "--out", str(tmp_path / "o.jsonl"), "--port", "0")
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "not UTF-8" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_secret_bytes_is_a_config_error() -> None:
    from ground.secret_strength import secret_bytes

    with pytest.raises(ConfigError, match="not UTF-8"):
        secret_bytes("x\udcff", "FLEETPULSE_WEBHOOKS__SECRET")
