"""Random bodies and headers at ``POST /ops/events`` and the webhook receiver: never a 5xx.

Bounded in time: a fixed number of examples, no shrinking deadline, one server per way in.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.streams.ops_events_server import fake_detect, ops_events_server
from webhooks.receiver import start_receiver
from webhooks.standard import standard_headers

TOKEN = secrets.token_urlsafe(32)
SECRET = secrets.token_urlsafe(32).encode()
FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as client:
        yield client


@pytest.fixture(scope="module")
def ops_url() -> Iterator[str]:
    with ops_events_server(fake_detect(TOKEN)) as (url, _):
        yield url


@pytest.fixture(scope="module")
def receiver_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    handle = start_receiver(0, SECRET, Path(tmp_path_factory.mktemp("fuzz")) / "alerts.jsonl")
    yield handle.url
    handle.stop()


_FIELD_VALUE = re.compile(rb"([\x21-\x7e\x80-\xff]([\t\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?)?")
# any bytes a client library lets through (h11 refuses controls and edge whitespace itself)
header_bytes = (
    st.binary(max_size=80)
    .map(lambda b: b.strip(b" \t"))
    .filter(lambda b: _FIELD_VALUE.fullmatch(b) is not None)
)
json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
)
json_value = st.recursive(
    json_leaf,
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=10), c, max_size=4),
    max_leaves=12,
)
step_like = st.fixed_dictionaries(
    {},
    optional={
        "host_id": st.one_of(st.text(max_size=20), st.sampled_from(["node-1", "../x", "a" * 200])),
        "kind": st.sampled_from(["out_of_service", "returned_to_service", "vanished", ""]),
        "actor": st.text(max_size=10),
        "reason": st.text(max_size=50),
        "ts": st.integers(min_value=-(2**70), max_value=2**70) | st.floats(),
        "ticket_id": st.text(max_size=10) | st.none(),
        "cluster": st.text(max_size=10) | st.none(),
    },
)
bodies = st.one_of(
    st.binary(max_size=300),
    json_value.map(lambda v: json.dumps(v).encode()),
    step_like.map(lambda v: json.dumps(v, allow_nan=True).encode()),
)


@FUZZ
@given(
    body=bodies,
    auth=st.one_of(st.none(), header_bytes, st.just(f"Bearer {TOKEN}".encode())),
    extra=header_bytes,
)
def test_ops_events_never_answers_5xx(
    http: httpx.Client, ops_url: str, body: bytes, auth: bytes | None, extra: bytes
) -> None:
    headers = {b"Content-Type": b"application/json", b"X-Fuzz": extra}
    if auth is not None:
        headers[b"Authorization"] = auth
    r = http.post(ops_url, content=body, headers=headers)
    assert r.status_code < 500, (r.status_code, r.text)


@FUZZ
@given(
    body=bodies,
    msg_id=st.one_of(st.text(max_size=30), st.just("a-1")),
    signed=st.booleans(),
    mangle=st.dictionaries(
        st.sampled_from([b"webhook-id", b"webhook-timestamp", b"webhook-signature"]), header_bytes
    ),
)
def test_the_receiver_never_answers_5xx(
    http: httpx.Client, receiver_url: str, body: bytes, msg_id: str, signed: bool, mangle: dict[bytes, bytes]
) -> None:
    headers: dict[bytes, bytes] = {}
    if signed and msg_id.isascii() and msg_id.isprintable() and msg_id:
        headers = {
            k.encode(): v.encode() for k, v in standard_headers(SECRET, msg_id, body, time.time()).items()
        }
    headers.update(mangle)
    r = http.post(receiver_url, content=body, headers=headers)
    assert r.status_code < 500, (r.status_code, r.text)
