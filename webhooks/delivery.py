"""Delivers outbox entries: signed POSTs, per-URL concurrency, retries with backoff, dead letters kept.

Each URL has its own in-flight budget, so a slow or dead receiver only ever delays its own
deliveries. Outcomes are written to the outbox after every attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable, Sequence
from typing import NamedTuple

import httpx
from pydantic import SecretBytes

from webhooks.backoff import BackoffPolicy, is_retryable, retry_after_s
from webhooks.errors import OutboxError
from webhooks.metrics import WebhookMetrics, redact_url
from webhooks.outbox import Delivery, Outbox
from webhooks.schemes import Scheme, signed_headers

log = logging.getLogger(__name__)

USER_AGENT = "fleetpulse-webhooks/1"
GAUGE_REFRESH_S = 0.5  # the gauges cost a COUNT over pending rows: not once per delivery


class _RedactUrls(logging.Filter):
    """httpx logs every request URL at INFO; URLs may carry tokens, so log only their redacted form."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(redact_url(str(a)) if isinstance(a, httpx.URL) else a for a in record.args)
        return True


def _redact_httpx_logs() -> None:
    httpx_log = logging.getLogger("httpx")
    if not any(isinstance(f, _RedactUrls) for f in httpx_log.filters):
        httpx_log.addFilter(_RedactUrls())


class Outcome(NamedTuple):
    """What one attempt did: ``delivered``, ``retry`` (with when) or ``dead``."""

    kind: str
    status: int | None
    error: str | None
    retry_at: float | None = None


class Deliverer:
    """Sends due deliveries from an ``Outbox`` through an injected ``httpx.AsyncClient``."""

    def __init__(
        self,
        outbox: Outbox,
        client: httpx.AsyncClient,
        *,
        secret: bytes,
        policy: BackoffPolicy,
        metrics: WebhookMetrics | None = None,
        max_in_flight_per_url: int = 4,
        clock: Callable[[], float] = time.time,
        rng: random.Random | None = None,
        poll_s: float = 1.0,
        urls: Sequence[str] | None = None,
        scheme: Scheme = "standard",
        body_for: Callable[[Delivery], bytes] | None = None,
    ) -> None:
        """``body_for``: what a delivery sends (default: its stored body; ``webhooks.alertmanager``)."""
        self.outbox = outbox
        self.body_for = body_for or (lambda d: d.body)
        self.scheme: Scheme = scheme
        self.client = client
        self._secret = SecretBytes(secret)  # repr shows stars, should this object ever be logged
        self.policy = policy
        self.metrics = metrics or WebhookMetrics()
        self.max_in_flight_per_url = max_in_flight_per_url
        self.clock = clock
        self.rng = rng or random.Random()
        self.poll_s = poll_s
        self.urls = list(urls) if urls is not None else None  # None: every URL in the outbox
        self._in_flight: dict[str, dict[str, asyncio.Task[Outcome | None]]] = {}
        self._wake = asyncio.Event()
        self._gauges_at = -GAUGE_REFRESH_S
        _redact_httpx_logs()

    def wake(self) -> None:
        """Look for due work now (new alerts were added, or a slot freed up)."""
        self._wake.set()

    @property
    def in_flight(self) -> int:
        return sum(len(tasks) for tasks in self._in_flight.values())

    async def start_due(self) -> int:
        """Start a task for every due delivery that fits its URL's in-flight budget; return how many."""
        started = 0
        now = self.clock()
        box = self.outbox
        for url in self.urls if self.urls is not None else await box.off_loop(box.urls):
            running = self._in_flight.setdefault(url, {})
            free = self.max_in_flight_per_url - len(running)
            if free <= 0:
                continue
            for d in await box.off_loop(box.due, url, now, free, exclude=list(running)):
                running[d.alert_id] = asyncio.create_task(self._run_one(d), name=f"deliver {d.alert_id}")
                started += 1
        if time.monotonic() - self._gauges_at > GAUGE_REFRESH_S:
            await self._refresh_gauges()
        return started

    async def _run_one(self, d: Delivery) -> Outcome | None:
        try:
            return await self.attempt(d)
        except OutboxError as exc:  # the POST may have landed; the row stays pending and is re-sent
            log.error("webhook %s alert %s: %s", redact_url(d.url), d.alert_id, exc)
            return None
        except Exception as exc:  # noqa: BLE001 - a bug here must be seen, not lost in an unawaited task
            log.error("webhook %s alert %s: unexpected %s", redact_url(d.url), d.alert_id, type(exc).__name__)
            return None
        finally:
            self._in_flight.get(d.url, {}).pop(d.alert_id, None)
            self._wake.set()

    async def attempt(self, d: Delivery) -> Outcome:
        """POST one delivery and record the outcome in the outbox."""
        now = self.clock()
        body = self.body_for(d)
        headers = {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            **signed_headers(self.scheme, self._secret.get_secret_value(), d.alert_id, body, now),
        }
        target = redact_url(d.url)
        retry_hint: float | None = None
        try:
            resp = await self.client.post(d.url, content=body, headers=headers)
        except httpx.InvalidURL as exc:  # configuration, not weather: retrying cannot help
            status: int | None = None
            error = self._scrub(f"{type(exc).__name__}: {exc}", d.url)
            retryable = False
        except Exception as exc:  # noqa: BLE001 - transport errors and anything else: one bad item must not spin
            status = None
            error = self._scrub(f"{type(exc).__name__}: {exc}", d.url)
            retryable = True
        else:
            status = resp.status_code
            if 200 <= status < 300:
                await self.outbox.off_loop(
                    self.outbox.record_success, d.alert_id, d.url, self.clock(), status
                )
                self.metrics.delivered.labels(url=target).inc()
                log.debug("webhook %s alert %s delivered (HTTP %d)", target, d.alert_id, status)
                return Outcome("delivered", status, None)
            error = f"HTTP {status}"
            retryable = is_retryable(status)
            retry_hint = retry_after_s(resp.headers.get("Retry-After"))
        attempts = d.attempts + 1
        done = self.clock()
        if not retryable or self.policy.exhausted(attempts):
            await self.outbox.off_loop(
                self.outbox.record_failure, d.alert_id, d.url, done, error, status, None
            )
            self.metrics.failures.labels(url=target).inc()
            why = "not retryable" if not retryable else f"gave up after {attempts} attempts"
            log.warning("webhook %s alert %s dead (%s): %s", target, d.alert_id, why, error)
            return Outcome("dead", status, error)
        delay = self.policy.delay(attempts, self.rng.random())
        if retry_hint is not None:
            delay = min(max(delay, retry_hint), self.policy.max_s)
        retry_at = done + delay
        await self.outbox.off_loop(
            self.outbox.record_failure, d.alert_id, d.url, done, error, status, retry_at
        )
        self.metrics.retries.labels(url=target).inc()
        log.info(
            "webhook %s alert %s attempt %d failed (%s); retry in %.2f s",
            target,
            d.alert_id,
            attempts,
            error,
            delay,
        )
        return Outcome("retry", status, error, retry_at)

    def _scrub(self, text: str, url: str) -> str:
        # Transport errors may quote the URL (tokens in it) and, defensively, never echo the key.
        text = text.replace(url, redact_url(url))
        secret = self._secret.get_secret_value().decode(errors="ignore")
        return text.replace(secret, "***") if secret else text

    async def _refresh_gauges(self) -> None:
        self.metrics.outbox_depth.set(await self.outbox.off_loop(self.outbox.depth))
        self.metrics.outbox_dead.set(await self.outbox.off_loop(self.outbox.dead))
        self._gauges_at = time.monotonic()

    async def _wait_s(self) -> float:
        nxt = await self.outbox.off_loop(self.outbox.next_due_at)
        if nxt is None:
            return self.poll_s
        # In the past means everything due is in flight or over budget: a finishing task wakes us.
        ahead = nxt - self.clock()
        return self.poll_s if ahead <= 0 else min(ahead, self.poll_s)

    async def run(self, stop: asyncio.Event) -> None:
        """Deliver until ``stop`` is set; call ``aclose`` afterwards to settle in-flight work."""
        while not stop.is_set():
            self._wake.clear()
            await self.start_due()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=await self._wait_s())

    async def drain(self, timeout_s: float) -> bool:
        """Deliver until nothing is pending or in flight (True) or ``timeout_s`` passes (False)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self._wake.clear()
            await self.start_due()
            if not self.in_flight and await self.outbox.off_loop(self.outbox.depth) == 0:
                return True
            try:
                left = max(0.0, deadline - time.monotonic())
                await asyncio.wait_for(self._wake.wait(), timeout=min(await self._wait_s(), left))
            except TimeoutError:
                pass
        return False

    async def aclose(self, grace_s: float = 5.0) -> None:
        """Let in-flight attempts finish for up to ``grace_s``, then cancel them (they stay pending)."""
        tasks = [t for running in self._in_flight.values() for t in running.values()]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=grace_s)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        await self._refresh_gauges()
