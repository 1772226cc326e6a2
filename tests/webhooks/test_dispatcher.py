"""Dispatcher ingest without Kafka: records → outbox (idempotent) or dead letters; config checks."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from schemas import Codec, XidRaised
from tests.webhooks.conftest import SECRET, Recorder, webhook_settings
from webhooks import Dispatcher, WebhookConfigError, check_config
from webhooks.errors import OutboxError

URL = "http://hooks.example/alerts"


@dataclass
class FakeRecord:
    topic: str
    partition: int
    offset: int
    value: bytes | None
    key: bytes | None = None
    timestamp: int = 0


def records(values: list[bytes | None], offset: int = 0) -> dict[str, list[FakeRecord]]:
    return {"tp0": [FakeRecord("fleet.alerts", 0, offset + i, v) for i, v in enumerate(values)]}


@pytest.fixture
def dispatcher(tmp_path: Path) -> Any:
    made: list[Dispatcher] = []

    def make(**kw: Any) -> Dispatcher:
        d = Dispatcher(webhook_settings(tmp_path, [URL]), **kw)
        d.dead: list[dict[str, Any]] = []  # type: ignore[misc]

        async def capture(recs: list[dict[str, Any]]) -> None:
            d.dead.extend(recs)  # type: ignore[attr-defined]

        d._dead_letter = capture  # type: ignore[method-assign]
        made.append(d)
        return d

    yield make
    for d in made:
        d.close()


def test_alerts_go_to_the_outbox_and_offsets_advance(
    dispatcher: Any, alert: Callable[..., dict[str, Any]]
) -> None:
    d = dispatcher()
    codec = Codec()
    offsets = asyncio.run(
        d.ingest(records([codec.encode(alert("a1")), codec.encode(alert("a2"))], offset=40))
    )
    assert offsets == {"tp0": 42}
    assert d.outbox.stats() == (2, 2, 0, 0)
    assert {r.alert_id for r in d.outbox.deliveries()} == {"a1", "a2"}
    # the same batch again (a crash between outbox write and offset commit): nothing new
    asyncio.run(d.ingest(records([codec.encode(alert("a1")), codec.encode(alert("a2"))], offset=40)))
    assert d.outbox.stats() == (2, 2, 0, 0)
    assert d.metrics.value("fleetpulse_webhook_alerts_ingested_total") == 2


def test_undecodable_and_foreign_records_are_dead_lettered(
    dispatcher: Any, alert: Callable[..., dict[str, Any]]
) -> None:
    d = dispatcher()
    codec = Codec()
    payload = {"gpu": 0, "xid": 79, "pci_bus_id": "0000:3b:00.0", "message": ""}
    foreign = codec.encode(
        XidRaised(event_id="e", host_id="h", cluster="c", ts=1, payload=payload).to_record()
    )
    offsets = asyncio.run(d.ingest(records([b"\x01garbage", None, foreign, codec.encode(alert("ok"))])))
    assert offsets == {"tp0": 4}
    assert d.outbox.stats().alerts == 1
    reasons = [(r["payload"]["source_offset"], r["payload"]["error_type"]) for r in d.dead]
    assert reasons == [(0, "FramingError"), (1, "FramingError"), (2, "UnexpectedEventError")]
    assert all(r["event_type"] == "RecordDeadLettered" for r in d.dead)
    codec.encode(d.dead[0])  # a valid RecordDeadLettered
    assert d.dead[0]["event_id"] == "dlq:fleet.alerts:0:0"


def test_an_alert_no_notification_can_be_built_from_is_dead_lettered_and_the_batch_goes_on(
    dispatcher: Any, alert: Callable[..., dict[str, Any]]
) -> None:
    d = dispatcher()
    codec = Codec()
    far = dict(alert("far"), ts=10**17)  # valid Avro (a long), but beyond any calendar date
    offsets = asyncio.run(d.ingest(records([codec.encode(far), codec.encode(alert("ok"))])))
    assert offsets == {"tp0": 2}
    assert {r.alert_id for r in d.outbox.deliveries()} == {"ok"}
    [dead] = d.dead
    assert dead["payload"]["error_type"] == "UnusableAlertError"
    assert "out of range" in dead["payload"]["reason"]


def test_dispatch_loop_delivers_through_an_injected_transport(
    tmp_path: Path, alert: Callable[..., dict[str, Any]]
) -> None:
    rec = Recorder(script={URL: [503, 503]})
    d = Dispatcher(webhook_settings(tmp_path, [URL]), transport=httpx.MockTransport(rec))

    async def scenario() -> None:
        async with httpx.AsyncClient(transport=httpx.MockTransport(rec)) as client:
            d.deliverer = d._make_deliverer(client)
            await d.ingest(records([Codec().encode(alert("z1"))]))
            assert await d.deliverer.drain(5.0)

    try:
        asyncio.run(scenario())
        assert d.outbox.stats().delivered == 1 and rec.ok_count(URL, "z1") == 3
    finally:
        d.close()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"secret": None}, "FLEETPULSE_WEBHOOKS__SECRET"),
        ({"secret": ""}, "FLEETPULSE_WEBHOOKS__SECRET"),
        ({"secret": "change-me"}, "placeholder"),  # the old docker-compose fallback
        ({"secret": "31-bytes-is-one-byte-too-short!"}, "at least 32"),
        ({"urls": []}, "FLEETPULSE_WEBHOOKS__URLS"),
        ({"urls": ["ftp://x"]}, "http(s)"),
    ],
)
def test_bad_configuration_fails_at_start_saying_what_to_set(
    tmp_path: Path, fields: dict[str, Any], message: str
) -> None:
    urls = fields.pop("urls", [URL])
    settings = webhook_settings(tmp_path, urls, **fields)
    with pytest.raises(WebhookConfigError) as info:
        check_config(settings.webhooks)
    assert message in str(info.value)
    with pytest.raises(WebhookConfigError):
        Dispatcher(settings)


def test_settings_never_show_the_secret(tmp_path: Path) -> None:
    settings = webhook_settings(tmp_path, [URL])
    assert settings.webhooks.secret is not None
    assert settings.webhooks.secret.get_secret_value() == SECRET
    for text in (repr(settings), str(settings), settings.model_dump_json()):
        assert SECRET not in text


def test_the_event_loop_runs_on_while_another_process_holds_the_outbox_lock(
    dispatcher: Any, alert: Callable[..., dict[str, Any]]
) -> None:
    """``fleetpulse outbox --requeue-dead`` holding the write lock must not freeze heartbeats and deliveries."""
    import sqlite3

    d = dispatcher()
    other = sqlite3.connect(d.outbox.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process's write transaction
    held_s = 1.0

    async def scenario() -> tuple[int, dict[str, int]]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.05)
                ticks += 1

        beat = asyncio.create_task(ticker())
        asyncio.get_running_loop().call_later(held_s, other.execute, "COMMIT")
        offsets = await d.ingest(records([Codec().encode(alert("a1"))]))
        beat.cancel()
        return ticks, offsets

    try:
        ticks, offsets = asyncio.run(scenario())
    finally:
        other.close()
    assert offsets == {"tp0": 1}
    assert d.outbox.stats().pending == 1  # stored once the lock was released
    assert ticks >= held_s / 0.05 / 2  # the loop went on meanwhile (it was frozen for the whole second)


class FakeConsumer:
    def __init__(self) -> None:
        self.seeks: list[tuple[str, int]] = []
        self.commits: list[dict[str, int]] = []

    def seek(self, tp: str, offset: int) -> None:
        self.seeks.append((tp, offset))

    async def commit(self, offsets: dict[str, int]) -> None:
        self.commits.append(offsets)


def test_a_batch_the_outbox_refuses_is_read_again_not_committed_and_the_dispatcher_goes_on(
    dispatcher: Any, alert: Callable[..., dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    d = dispatcher()
    consumer = FakeConsumer()
    batch = records([Codec().encode(alert("a1")), Codec().encode(alert("a2"))], offset=7)
    add = d.outbox.add

    def full(*args: Any) -> int:
        raise OutboxError(d.outbox.path, "add failed: database or disk is full")

    monkeypatch.setattr(d.outbox, "add", full)
    assert asyncio.run(d.take(consumer, batch)) is False
    assert consumer.seeks == [("tp0", 7)] and consumer.commits == []  # rewound, nothing acknowledged
    monkeypatch.setattr(d.outbox, "add", add)  # the disk has room again
    assert asyncio.run(d.take(consumer, batch)) is True
    assert consumer.commits == [{"tp0": 9}]
    assert d.outbox.stats().pending == 2
