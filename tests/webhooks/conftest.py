"""Factories for webhook tests: alert records, settings pointed at a temp outbox, a recording MockTransport."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from ground.settings import Settings
from schemas import AlertRaised

SECRET = "s3cr3t-hmac-key-never-logged-0123456789"
_ids = itertools.count(1)


def make_alert(alert_id: str | None = None, **payload: Any) -> dict[str, Any]:
    """An AlertRaised record (envelope + payload) with sensible defaults."""
    n = next(_ids)
    body = {
        "alert_id": alert_id or f"alert-{n}",
        "alertname": "NewRMA",
        "severity": "critical",
        "status": "firing",
        "labels": {"rule": "dram_uce_repeat_gpu"},
        "annotations": {"summary": "GPU 3 had 2 DRAM UCE in 7 d"},
        "generator_url": None,
    }
    body.update(payload)
    return AlertRaised(
        event_id=f"evt-{n}", host_id="c0-h0001", cluster="c0", ts=1_700_000_000_000 + n, payload=body
    ).to_record()


@pytest.fixture
def alert() -> Callable[..., dict[str, Any]]:
    return make_alert


def webhook_settings(tmp_path: Path, urls: list[str], **webhooks: Any) -> Settings:
    fields: dict[str, Any] = {
        "urls": urls,
        "secret": SECRET,
        "data_dir": str(tmp_path / "outbox"),
        "backoff_base_s": 0.001,
        "backoff_max_s": 0.01,
        "max_attempts": 5,
        "timeout_s": 2.0,
    }
    fields.update(webhooks)
    return Settings.load(webhooks=fields, paths={"home": str(tmp_path / "home")})


class Recorder:
    """A MockTransport handler: per-URL scripted statuses, records every request it saw."""

    def __init__(self, script: dict[str, list[int]] | None = None, default: int = 200) -> None:
        self.script = {url: list(codes) for url, codes in (script or {}).items()}
        self.default = default
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        codes = self.script.get(str(request.url))
        code = codes.pop(0) if codes else self.default
        if code == 0:
            raise httpx.ConnectError("connection refused", request=request)
        return httpx.Response(code, json={"ok": code < 300})

    def ok_count(self, url: str, key: str) -> int:
        return sum(1 for r in self.requests if str(r.url) == url and r.headers["Idempotency-Key"] == key)
