"""Hostile input to ``POST /ops/events`` over real HTTP: the token before the body, a capped body, 4xx not 500."""

from __future__ import annotations

import json
import logging
import secrets
import socket
from typing import Any

import httpx
import pytest

from ground.settings import Settings
from schemas import Codec
from schemas.bounds import MIN_TS_MS
from streams.operator_events import MAX_STEP_BYTES
from tests.streams.ops_events_server import fake_detect as detect_with
from tests.streams.ops_events_server import ops_events_server

TOKEN = secrets.token_urlsafe(32)
STEP = {"host_id": "node-2", "kind": "returned_to_service", "actor": "dc-tech", "ticket_id": "T-1"}


def fake_detect() -> Any:
    return detect_with(TOKEN)


def post_all(detect: Any, requests: list[tuple[Any, dict[str, bytes]]]) -> list[httpx.Response]:
    with ops_events_server(detect) as (url, _), httpx.Client(timeout=10) as http:
        return [http.post(url, content=body, headers=headers) for body, headers in requests]


def auth(token: str = TOKEN) -> dict[str, bytes]:
    return {"Authorization": f"Bearer {token}".encode(), "Content-Type": b"application/json"}


def test_a_good_step_is_accepted() -> None:
    detect = fake_detect()
    (r,) = post_all(detect, [(json.dumps(STEP).encode(), auth())])
    assert r.status_code == 202, r.text
    assert len(detect.actions_topic.sent) == 1


def test_wrong_token_is_refused_before_the_body_is_read() -> None:
    """Finding 1: a huge body with a wrong token is answered 401 from its headers, unread."""
    with (
        ops_events_server(fake_detect()) as (_, port),
        socket.create_connection(("127.0.0.1", port), 5) as sock,
    ):
        sock.sendall(
            b"POST /ops/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\n"
            b"Content-Type: application/json\r\nContent-Length: 157286400\r\n\r\n" + b"{" * 1000
        )
        answer = sock.recv(4096)  # the old code waited for all 150 MB first (a timeout here)
    assert answer.startswith(b"HTTP/1.1 401"), answer


def test_a_body_over_the_cap_is_413_even_with_the_token() -> None:
    detect = fake_detect()
    big = json.dumps({**STEP, "reason": "x" * (MAX_STEP_BYTES + 10)}).encode()
    (r,) = post_all(detect, [(big, auth())])
    assert r.status_code == 413, r.text
    assert detect.actions_topic.sent == []


def test_a_chunked_body_over_the_cap_is_413() -> None:
    detect = fake_detect()
    (r,) = post_all(detect, [((b" " * MAX_STEP_BYTES for _ in range(4)), auth())])
    assert r.status_code == 413
    assert detect.actions_topic.sent == []


def test_non_utf8_authorization_is_401_not_500(caplog: pytest.LogCaptureFixture) -> None:
    """Finding 2: ``Bearer \\xff`` arrives surrogate-escaped; it is a wrong token, not a crash."""
    caplog.set_level(logging.INFO)
    headers = {"Authorization": b"Bearer \xff\xfe", "Content-Type": b"application/json"}
    (r,) = post_all(fake_detect(), [(json.dumps(STEP).encode(), headers)])
    assert r.status_code == 401
    assert not [rec for rec in caplog.records if rec.exc_info]


BAD_STEPS = {
    "year-3000": {**STEP, "ts": 32_503_680_000_000},
    "ts-2^63": {**STEP, "ts": 2**63},
    "ts-1999": {**STEP, "ts": MIN_TS_MS - 1},
    "long-host": {**STEP, "host_id": "h" * 10_000},
    "dot-dot-host": {**STEP, "host_id": "../../etc"},
    "inner-dot-dot": {**STEP, "host_id": "a/../../etc"},
    "esc-host": {**STEP, "host_id": "node\x1b[2J"},
    "unknown-kind": {**STEP, "kind": "vanished"},
    "bad-cluster": {**STEP, "cluster": "c 1"},
    "extra-field": {**STEP, "admin": True},
}


@pytest.mark.parametrize("step", list(BAD_STEPS.values()), ids=list(BAD_STEPS))
def test_out_of_bounds_steps_are_400(step: dict[str, Any], caplog: pytest.LogCaptureFixture) -> None:
    """Findings 4 and 6: times, ids and types outside the shared bounds are 400 with one log line."""
    caplog.set_level(logging.INFO, logger="streams.web")
    detect = fake_detect()
    (r,) = post_all(detect, [(json.dumps(step).encode(), auth())])
    assert r.status_code == 400, r.text
    assert detect.actions_topic.sent == []
    lines = [rec for rec in caplog.records if rec.name == "streams.web"]
    assert len(lines) == 1 and lines[0].exc_info is None


RAW_BODIES = {
    "deep-json": b"[" * 30_000 + b"]" * 30_000,
    "deep-in-object": b'{"host_id":' + b"[" * 25_000 + b"]" * 25_000 + b"}",
    "nan": b'{"host_id":"n","kind":"out_of_service","actor":"a","ts":NaN}',
    "not-utf8": b'{"host_id":"\xff"}',
    "lone-surrogate": b'{"host_id":"\\ud800","kind":"out_of_service","actor":"a"}',
    "array": b"[]",
    "empty": b"",
    "huge-int": b'{"host_id":"n","kind":"out_of_service","actor":"a","ts":' + b"9" * 5000 + b"}",
}


@pytest.mark.parametrize("body", list(RAW_BODIES.values()), ids=list(RAW_BODIES))
def test_malformed_bodies_are_400(body: bytes, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    (r,) = post_all(fake_detect(), [(body, auth())])
    assert r.status_code == 400, r.text
    assert not [rec for rec in caplog.records if rec.exc_info]


def test_a_long_reason_is_cut_and_controls_stripped() -> None:
    detect = fake_detect()
    step = {**STEP, "reason": "\x1b[31mred\u202e" + "r" * 900_000, "actor": "dc\x00tech"}
    (r,) = post_all(detect, [(json.dumps(step).encode()[: MAX_STEP_BYTES - 1], auth())])
    assert r.status_code == 400  # a cut body is not JSON: the cap is what stops 900 KB
    (r,) = post_all(detect, [(json.dumps({**step, "reason": step["reason"][:5000]}).encode(), auth())])
    assert r.status_code == 202, r.text
    record = Codec().decode(detect.actions_topic.sent[0][1]).record
    reason = record["payload"]["reason"]
    assert len(reason) <= 2048 and "\x1b" not in reason and "\u202e" not in reason
    assert record["payload"]["actor"] == "dctech"


def test_a_broker_failure_is_503_in_one_line(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    detect = fake_detect()

    async def refuse(**_: Any) -> None:
        raise RuntimeError("MessageSizeTooLargeError")

    detect.actions_topic.send = refuse
    (r,) = post_all(detect, [(json.dumps(STEP).encode(), auth())])
    assert r.status_code == 503
    assert not [rec for rec in caplog.records if rec.exc_info]


def test_the_detect_worker_caps_its_request_bodies(tmp_path: Any) -> None:
    from streams.faust_app import faust_app

    app = faust_app(Settings(), tmp_path, None)
    assert app.conf.web_application_options["client_max_size"] == MAX_STEP_BYTES


@pytest.mark.parametrize("token", ["a", "passwordpasswordpasswordpassword", "change-me", "x\udcff" * 20])
def test_a_weak_or_non_utf8_operator_token_stops_the_worker_at_start(token: str) -> None:
    """Finding 9: ``detect.ops_token`` had no strength check at all (``a`` started)."""
    from ground.errors import ConfigError
    from streams.worker import check_ops_token

    with pytest.raises(ConfigError, match="FLEETPULSE_DETECT__OPS_TOKEN"):
        check_ops_token(Settings.model_validate({"detect": {"ops_token": token}}))
    check_ops_token(Settings.model_validate({"detect": {"ops_token": TOKEN}}))
    check_ops_token(Settings())  # unset: the endpoint is off, nothing to check
