"""A small webhook receiver for the demo and the fault tests: verify, dedup, append to JSONL.

``POST /`` (any path) checks the signature and its timestamp, never stores a delivery id
(``webhook-id``) twice (a repeat is answered 200
so the sender stops), and appends accepted alerts to a JSONL file; ``GET /stats`` reports
counters. Ids already in the file are loaded at start, so a restarted receiver still
recognises repeats. Every malformed input is a 4xx, never a traceback.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from aiohttp import web
from pydantic import SecretBytes

from ground.log_redaction import redact_in_logs
from ground.private_files import private_dir
from webhooks.errors import MalformedSignatureError, SignatureError, WebhookConfigError, WebhookError
from webhooks.schemes import Scheme, check_secret, verify_request

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1 << 20  # an alert notification is a few KiB; larger requests get 413
MAX_TOLERANCE_S = 900.0
HEADER_TIMEOUT_S = 10.0  # a connection that has not sent a whole request head by then is closed
BODY_TIMEOUT_S = 10.0  # a body not received by then is answered 408 (a sender's own timeout is 10 s)


class BadBodyError(ValueError):
    """A signed body that is not strict JSON (NaN, Infinity, 1e999, a lone surrogate, nesting too deep)."""


def _reject_constant(name: str) -> float:
    raise BadBodyError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999 parses as inf, and would be stored as Infinity
        raise BadBodyError(f"number {text[:40]} is beyond a double")
    return value


def parse_body(body: bytes) -> object:
    """Strict JSON: NaN, Infinity, numbers beyond a double and lone surrogates are refused, and so is
    nesting too deep to parse."""
    try:
        parsed = json.loads(body, parse_constant=_reject_constant, parse_float=_finite_float)
        json.dumps(parsed, ensure_ascii=False).encode()  # a lone surrogate escape cannot be UTF-8
    except RecursionError:
        raise BadBodyError("body nests too deeply") from None
    except UnicodeEncodeError:
        raise BadBodyError("body holds a lone surrogate (\\ud800-\\udfff): not Unicode text") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, BadBodyError, int too long
        raise BadBodyError(str(exc) if isinstance(exc, BadBodyError) else "body is not JSON") from None
    return parsed


@dataclass
class ReceiverStats:
    received: int = 0  # accepted and stored
    duplicates: int = 0  # valid, but the key was seen before
    rejected: int = 0  # bad signature, stale timestamp, missing key or bad JSON
    stored: int = 0  # lines in the JSONL file (including earlier runs)


def load_keys(out: Path) -> set[str]:
    """Idempotency keys already stored in a receiver's JSONL file (a torn last line is ignored)."""
    keys: set[str] = set()
    if out.exists():
        with out.open(encoding="utf-8") as fh:
            for line in fh:
                try:
                    keys.add(json.loads(line)["idempotency_key"])
                except (ValueError, KeyError, TypeError):
                    continue
    return keys


class WebhookReceiver:
    """The aiohttp application and its state; ``app`` can also be mounted in another server."""

    def __init__(
        self,
        secret: bytes,
        out: Path,
        *,
        scheme: Scheme = "standard",
        tolerance_s: float = 300.0,
        clock: Callable[[], float] = time.time,
        ack_delay_s: float = 0.0,
        secret_source: str = "FLEETPULSE_WEBHOOKS__SECRET",
        header_timeout_s: float = HEADER_TIMEOUT_S,
        body_timeout_s: float = BODY_TIMEOUT_S,
    ) -> None:
        check_secret(secret, secret_source)
        redact_in_logs(secret.decode(errors="replace"))
        if not 0 < tolerance_s <= MAX_TOLERANCE_S:
            raise WebhookConfigError(
                f"signature tolerance must be in (0, {MAX_TOLERANCE_S:g}] s, not {tolerance_s}"
            )
        self._secret = SecretBytes(secret)
        self.scheme: Scheme = scheme
        self.out = Path(out)
        self.tolerance_s = tolerance_s
        self.clock = clock
        self.ack_delay_s = ack_delay_s  # a slow receiver: every answer comes this late (fault tests)
        self.header_timeout_s = header_timeout_s
        self.body_timeout_s = body_timeout_s
        self.seen = load_keys(self.out)
        self.stats = ReceiverStats(stored=len(self.seen))
        self.app = web.Application(client_max_size=MAX_BODY_BYTES)
        self.app.router.add_get("/stats", self._stats)
        self.app.router.add_post("/{tail:.*}", self._receive)

    def runner(self) -> web.AppRunner:
        """An AppRunner that closes a connection whose request head is not complete in ``header_timeout_s``
        (aiohttp closes a connection still waiting for a request when its keep-alive timer fires)."""
        return web.AppRunner(
            self.app, access_log=None, shutdown_timeout=1.0, keepalive_timeout=self.header_timeout_s
        )

    async def _slow_answer(self) -> None:
        if self.ack_delay_s:
            await asyncio.sleep(self.ack_delay_s)

    async def _stats(self, request: web.Request) -> web.Response:
        return web.json_response(asdict(self.stats))

    def _reject(self, status: int, reason: str) -> web.Response:
        self.stats.rejected += 1
        log.info("receiver: rejected (%d) %s", status, reason)
        return web.json_response({"status": "rejected", "error": reason}, status=status)

    async def _receive(self, request: web.Request) -> web.Response:
        try:
            body = await asyncio.wait_for(request.read(), self.body_timeout_s)
        except web.HTTPRequestEntityTooLarge:
            return self._reject(413, f"body larger than {MAX_BODY_BYTES} bytes")
        except TimeoutError:
            return self._reject(408, f"body not received within {self.body_timeout_s:g} s")
        try:
            key = verify_request(
                self.scheme,
                self._secret.get_secret_value(),
                body,
                request.headers,
                self.clock(),
                self.tolerance_s,
            )
        except MalformedSignatureError as exc:
            return self._reject(400, str(exc))
        except SignatureError as exc:
            return self._reject(401, str(exc))
        if key in self.seen:  # a replay or a retry after a lost answer: never stored twice
            self.stats.duplicates += 1
            await self._slow_answer()
            return web.json_response({"status": "duplicate", "idempotency_key": key})
        try:
            alert = parse_body(body)
        except BadBodyError as exc:
            return self._reject(400, str(exc))
        line = json.dumps({"idempotency_key": key, "received_at": self.clock(), "body": alert}) + "\n"
        private_dir(self.out.parent)  # alerts name hosts and causes
        fd = os.open(self.out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with open(fd, "a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())  # 200 means stored: the sender will not send it again
        self.seen.add(key)
        self.stats.received += 1
        self.stats.stored += 1
        await self._slow_answer()
        return web.json_response({"status": "accepted", "idempotency_key": key})


class ReceiverHandle:
    """A receiver serving on its own thread and event loop; ``stop()`` closes the socket."""

    def __init__(self, receiver: WebhookReceiver, host: str, port: int) -> None:
        self.receiver = receiver
        self.host = host
        self.port = port
        self._loop = asyncio.new_event_loop()
        self._runner = receiver.runner()
        self._started = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._serve, name=f"webhook-receiver:{port}", daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    @property
    def stats(self) -> ReceiverStats:
        return self.receiver.stats

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._start())
        except BaseException as exc:  # reported to the starting thread
            self._error = exc
            self._started.set()
            return
        self._started.set()
        self._loop.run_forever()
        self._loop.run_until_complete(self._runner.cleanup())
        self._loop.close()

    async def _start(self) -> None:
        await self._runner.setup()
        sock = socket.socket(socket.AF_INET6 if ":" in self.host else socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # rebind right after a stop()
        try:
            sock.bind((self.host, self.port))
        except OSError:
            sock.close()
            raise
        self.port = sock.getsockname()[1]
        await web.SockSite(self._runner, sock).start()

    def start(self, timeout_s: float = 10.0) -> ReceiverHandle:
        self._thread.start()
        if not self._started.wait(timeout_s):
            raise WebhookError(f"receiver on {self.host}:{self.port} did not start within {timeout_s:g} s")
        if self._error is not None:
            self._thread.join()
            raise WebhookError(
                f"receiver on {self.host}:{self.port} failed to start: {self._error}"
            ) from self._error
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout_s)

    def __enter__(self) -> ReceiverHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_receiver(
    port: int,
    secret: bytes,
    out: Path | str,
    *,
    host: str = "127.0.0.1",
    scheme: Scheme = "standard",
    tolerance_s: float = 300.0,
    clock: Callable[[], float] = time.time,
    ack_delay_s: float = 0.0,
) -> ReceiverHandle:
    """Start a receiver in a background thread (``port=0``: any free port; see ``handle.port``)."""
    receiver = WebhookReceiver(
        secret, Path(out), scheme=scheme, tolerance_s=tolerance_s, clock=clock, ack_delay_s=ack_delay_s
    )
    return ReceiverHandle(receiver, host, port).start()


async def serve_forever(receiver: WebhookReceiver, host: str, port: int, stop: asyncio.Event) -> None:
    """Serve on the current loop until ``stop`` (the CLI's foreground mode)."""
    runner = receiver.runner()
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port, reuse_address=True).start()
        await stop.wait()
    finally:
        await runner.cleanup()
