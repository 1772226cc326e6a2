"""Deliverer against httpx.MockTransport: retries, exactly-once per URL, isolation, dead letters, secrecy."""

from __future__ import annotations

import asyncio
import logging
import random
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.webhooks.conftest import SECRET, Recorder
from webhooks import BackoffPolicy, Deliverer, Outbox, WebhookMetrics, notification
from webhooks.standard import verify_standard

A, B = "http://a.example/hook", "http://b.example/hook"
FAST = BackoffPolicy(base_s=0.001, max_s=0.01, jitter=0.5, max_attempts=5)


def deliverer(
    box: Outbox, handler: Any, policy: BackoffPolicy = FAST, **kw: Any
) -> tuple[Deliverer, httpx.AsyncClient]:
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return Deliverer(
        box, client, secret=SECRET.encode(), policy=policy, metrics=WebhookMetrics(), **kw
    ), client


async def drain(d: Deliverer, client: httpx.AsyncClient, timeout_s: float = 5.0) -> bool:
    try:
        return await d.drain(timeout_s)
    finally:
        await d.aclose()
        await client.aclose()


def test_fails_n_times_then_delivers_exactly_once_per_url(
    tmp_path: Path, alert: Callable[..., dict[str, Any]]
) -> None:
    rec = Recorder(script={A: [503, 0, 502], B: [500]})  # 0 = connection refused
    answered: list[tuple[str, str, int]] = []  # (url, alert id, status) of every request that got an answer

    def handler(request: httpx.Request) -> httpx.Response:
        response = rec(request)
        answered.append((str(request.url), request.headers["Idempotency-Key"], response.status_code))
        return response

    with Outbox.in_dir(tmp_path) as box:
        notes = [notification(alert(f"k{i}")) for i in range(3)]
        box.add(notes, [A, B], now=0.0)
        d, client = deliverer(box, handler)
        assert asyncio.run(drain(d, client))
        successes = Counter((url, key) for url, key, status in answered if 200 <= status < 300)
        assert successes == {
            (url, n.alert_id): 1 for n in notes for url in (A, B)
        }  # one 2xx per (URL, alert)
        # 4 scripted failures then one 2xx per (alert, URL): 10 requests, no extra sends after success
        assert len(rec.requests) == 6 + 4
        assert sorted(status for _, _, status in answered if status >= 300) == [500, 502, 503]
        assert box.stats() == (3, 0, 6, 0)
        m = d.metrics
        assert m.value("fleetpulse_webhook_delivered_total", url=A) == 3
        assert m.value("fleetpulse_webhook_retries_total", url=A) == 3
        assert m.value("fleetpulse_webhook_retries_total", url=B) == 1
        assert m.value("fleetpulse_webhook_outbox_depth") == 0


def test_requests_are_signed_and_carry_the_idempotency_key(
    tmp_path: Path, alert: Callable[..., dict[str, Any]]
) -> None:
    rec = Recorder()
    with Outbox.in_dir(tmp_path) as box:
        n = notification(alert("idem-1"))
        box.add([n], [A], 0.0)
        d, client = deliverer(box, rec, clock=lambda: 1_700_000_000.0)
        assert asyncio.run(drain(d, client))
    [req] = rec.requests
    assert req.method == "POST" and req.content == n.body
    assert req.headers["Idempotency-Key"] == "idem-1"
    assert req.headers["Content-Type"] == "application/json"
    assert verify_standard(SECRET.encode(), req.content, req.headers, now=1_700_000_005.0) == "idem-1"


def test_retry_times_follow_the_backoff_policy(tmp_path: Path, alert: Callable[..., dict[str, Any]]) -> None:
    """Gap n lies in [c·(1 − jitter), c] with c = min(max_s, base_s·2^(n−1)): 2, 4, 8, … capped at 100."""
    policy = BackoffPolicy(base_s=2.0, max_s=100.0, jitter=0.5, max_attempts=10)
    ceilings = [2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 100.0, 100.0]  # 128 and 256 are capped
    now = [1000.0]
    with Outbox.in_dir(tmp_path) as box:
        box.add([notification(alert("k"))], [A], now[0])
        d, client = deliverer(box, Recorder(default=503), policy, clock=lambda: now[0], rng=random.Random(7))

        async def attempts() -> list[float]:
            gaps = []
            for _ in ceilings:
                [due] = box.due(A, now[0], 10)
                outcome = await d.attempt(due)
                assert outcome.kind == "retry"
                gaps.append(outcome.retry_at - now[0])
                assert box.due(A, now[0], 10) == []  # not due before its time
                now[0] = outcome.retry_at
            await client.aclose()
            return gaps

        gaps = asyncio.run(attempts())
    for n, (gap, ceiling) in enumerate(zip(gaps, ceilings, strict=True), start=1):
        assert 0.5 * ceiling <= gap <= ceiling, (n, gap)
    assert any(gap < ceiling for gap, ceiling in zip(gaps, ceilings, strict=True))  # the jitter is applied
    assert len({round(gap / ceiling, 9) for gap, ceiling in zip(gaps, ceilings, strict=True)}) > 1


def test_after_the_attempt_cap_the_delivery_is_dead_counted_and_kept(
    tmp_path: Path, alert: Callable[..., dict[str, Any]]
) -> None:
    rec = Recorder(default=503)
    with Outbox.in_dir(tmp_path) as box:
        box.add([notification(alert("doomed"))], [A, B], 0.0)
        rec.script[B] = []
        rec.default = 503
        d, client = deliverer(box, lambda r: rec(r) if str(r.url) == A else httpx.Response(204))
        assert asyncio.run(drain(d, client))
        rows = {r.url: r for r in box.deliveries("doomed")}
        assert (
            rows[A].state == "dead" and rows[A].attempts == FAST.max_attempts and rows[A].last_status == 503
        )
        assert rows[B].state == "delivered"
        assert d.metrics.value("fleetpulse_webhook_failures_total", url=A) == 1
        assert d.metrics.value("fleetpulse_webhook_outbox_dead") == 1
    assert len(rec.requests) == FAST.max_attempts


def test_client_errors_are_not_retried(tmp_path: Path, alert: Callable[..., dict[str, Any]]) -> None:
    rec = Recorder(default=401)
    with Outbox.in_dir(tmp_path) as box:
        box.add([notification(alert("bad-auth"))], [A], 0.0)
        d, client = deliverer(box, rec)
        asyncio.run(drain(d, client))
        assert box.deliveries()[0].state == "dead"
    assert len(rec.requests) == 1


def test_retry_after_is_honoured_up_to_the_cap(tmp_path: Path, alert: Callable[..., dict[str, Any]]) -> None:
    policy = BackoffPolicy(base_s=0.1, max_s=30.0, jitter=0.0, max_attempts=5)
    with Outbox.in_dir(tmp_path) as box:
        box.add([notification(alert("k"))], [A], 0.0)
        d, client = deliverer(
            box, lambda r: httpx.Response(429, headers={"Retry-After": "12"}), policy, clock=lambda: 50.0
        )
        [due] = box.due(A, 50.0, 1)
        outcome = asyncio.run(d.attempt(due))
        asyncio.run(client.aclose())
    assert outcome.retry_at == 62.0


def test_a_slow_receiver_does_not_hold_up_another(
    tmp_path: Path, alert: Callable[..., dict[str, Any]]
) -> None:
    delivered_b: list[str] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        if str(request.url) == A:
            await asyncio.sleep(30)  # hangs far longer than the test
        delivered_b.append(request.headers["Idempotency-Key"])
        return httpx.Response(200)

    async def scenario(box: Outbox) -> None:
        d, client = deliverer(box, handler, max_in_flight_per_url=2)
        stop = asyncio.Event()
        task = asyncio.create_task(d.run(stop))
        for _ in range(200):  # B all answered and recorded (outcomes are written on the outbox's thread)
            if len(delivered_b) == 20 and d.in_flight == 2:
                break
            await asyncio.sleep(0.01)
        stop.set()
        d.wake()
        await task
        assert d.in_flight == 2  # A's budget, stuck
        await d.aclose(grace_s=0.05)
        await client.aclose()

    with Outbox.in_dir(tmp_path) as box:
        box.add([notification(alert(f"k{i}")) for i in range(20)], [A, B], 0.0)
        asyncio.run(scenario(box))
        assert sorted(delivered_b) == sorted(f"k{i}" for i in range(20))
        states = {r.state for r in box.deliveries() if r.url == A}
        assert states == {"pending"}  # cancelled in flight: still owed, resent on the next start


def test_secret_never_appears_in_logs_errors_or_outbox(
    tmp_path: Path, alert: Callable[..., dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    url_with_token = f"http://c.example/hook?token={SECRET}"
    answering_url_with_token = f"http://user:{SECRET}@d.example/hook?token={SECRET}"

    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"cannot connect to {request.url} with key {SECRET}", request=request)

    caplog.set_level(logging.DEBUG)
    with Outbox.in_dir(tmp_path) as box:
        box.add([notification(alert("k"))], [url_with_token, answering_url_with_token, A], 0.0)
        d, client = deliverer(box, lambda r: handler(r) if "c.example" in str(r.url) else httpx.Response(500))
        asyncio.run(drain(d, client))
        errors = " ".join(r.last_error or "" for r in box.deliveries())
    metrics_text = __import__("prometheus_client").generate_latest(d.metrics.registry).decode()
    assert "ConnectError" in errors and "HTTP 500" in errors  # the errors are recorded ...
    assert "HTTP Request: POST http://d.example/hook" in caplog.text  # ... and httpx logged the request
    for text in (caplog.text, errors, metrics_text, repr(d._secret)):
        assert SECRET not in text  # ... without the secret


def test_unexpected_transport_errors_are_retried_with_backoff_not_spun(
    tmp_path: Path, alert: Callable[..., dict[str, Any]]
) -> None:
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if len(calls) < 3:
            raise RuntimeError("transport bug")
        return httpx.Response(200)

    with Outbox.in_dir(tmp_path) as box:
        box.add([notification(alert("k"))], [A, "http://[::1/bad"], 0.0)
        d, client = deliverer(box, handler)
        assert asyncio.run(drain(d, client))
        rows = {r.url: r for r in box.deliveries()}
    assert rows[A].state == "delivered" and rows[A].attempts == 3
    assert rows["http://[::1/bad"].state == "dead"  # invalid URL: final, not retried
    assert len(calls) == 3


def test_only_configured_urls_are_called(tmp_path: Path, alert: Callable[..., dict[str, Any]]) -> None:
    rec = Recorder()
    with Outbox.in_dir(tmp_path) as box:
        box.add([notification(alert("k"))], [A, B], 0.0)  # B was configured when the alert arrived
        d, client = deliverer(box, rec, urls=[A])
        asyncio.run(d.drain(0.5))
        asyncio.run(client.aclose())
        states = {r.url: r.state for r in box.deliveries()}
    assert states == {A: "delivered", B: "pending"}
    assert {str(r.url) for r in rec.requests} == {A}
