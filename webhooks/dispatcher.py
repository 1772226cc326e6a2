"""``fleet.alerts`` → durable outbox → signed webhooks.

The Kafka offset of an alert is committed only after the alert is in the outbox, and the
outbox is keyed by ``alert_id``: a crash at any point re-reads at most one batch, which
the outbox ignores, so an alert is neither lost nor queued twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import httpx
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.errors import KafkaConnectionError, KafkaError

from ground.log_redaction import redact_in_logs
from ground.secret_strength import secret_bytes
from schemas import FLEET, Codec, DecodeError, RecordDeadLettered
from webhooks.alertmanager import api_url, body_for
from webhooks.backoff import BackoffPolicy
from webhooks.delivery import Deliverer
from webhooks.errors import (
    OutboxError,
    UnexpectedEventError,
    UnusableAlertError,
    WebhookConfigError,
    WebhookError,
)
from webhooks.metrics import WebhookMetrics
from webhooks.outbox import Outbox
from webhooks.payload import Notification, notification
from webhooks.schemes import check_secret

if TYPE_CHECKING:
    from ground.settings import Settings
    from ground.settings.detect import WebhookSettings

log = logging.getLogger(__name__)

DAY_S = 86400.0
OUTBOX_RETRY_S = 1.0  # pause before a batch the outbox refused (a full disk) is read again


class KafkaRecord(Protocol):
    """The fields of an aiokafka ``ConsumerRecord`` the dispatcher reads."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None


def check_config(ws: WebhookSettings) -> None:
    """Fail at start-up, saying what to set, if deliveries could not work."""
    if ws.secret is None or not ws.secret.get_secret_value():
        raise WebhookConfigError(
            "no webhook signing secret: set FLEETPULSE_WEBHOOKS__SECRET (or secret in the webhooks section of the config file)"
        )
    check_secret(secret_bytes(ws.secret.get_secret_value(), "FLEETPULSE_WEBHOOKS__SECRET"))
    if not ws.urls and not ws.alertmanager_urls:
        raise WebhookConfigError(
            "no webhook URLs: set FLEETPULSE_WEBHOOKS__URLS to a JSON list of URLs, or pass --url "
            "(or FLEETPULSE_WEBHOOKS__ALERTMANAGER_URLS to push into Alertmanager)"
        )
    bad = [u for u in (*ws.urls, *ws.alertmanager_urls) if not u.startswith(("http://", "https://"))]
    if bad:
        raise WebhookConfigError(f"{len(bad)} webhook URL(s) are not http(s):// URLs")


def targets_of(ws: WebhookSettings) -> list[str]:
    """Every URL an alert is delivered to: the webhook URLs and each Alertmanager's alerts endpoint."""
    return [*ws.urls, *(api_url(base) for base in ws.alertmanager_urls)]


def data_dir_of(settings: Settings) -> Path:
    """The outbox directory: ``webhooks.data_dir`` or ``<paths.home>/webhooks``."""
    return Path(settings.webhooks.data_dir or settings.paths.home / "webhooks").expanduser()


def dead_letter_record(
    rec: KafkaRecord, error: Exception, ts_ms: int, schema_id: int | None = None
) -> dict[str, Any]:
    """A RecordDeadLettered record for a record of the alerts topic that is not a usable alert."""
    reason = getattr(error, "reason", None) or str(error)
    return RecordDeadLettered(
        event_id=f"dlq:{rec.topic}:{rec.partition}:{rec.offset}",  # deterministic: a re-read is the same event
        host_id=FLEET,
        cluster=FLEET,
        ts=ts_ms,
        payload={
            "reason": reason,
            "error_type": type(error).__name__,
            "source_topic": rec.topic,
            "source_partition": rec.partition,
            "source_offset": rec.offset,
            "schema_id": schema_id,
            "original_key": rec.key,
            "original_value": rec.value or b"",
        },
    ).to_record()


class Dispatcher:
    """Consumes alerts (own group, manual commits) into the outbox and delivers them."""

    def __init__(
        self,
        settings: Settings,
        *,
        topic: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        metrics: WebhookMetrics | None = None,
        clock: Callable[[], float] = time.time,
        rng: random.Random | None = None,
        codec: Codec | None = None,
        outbox: Outbox | None = None,
    ) -> None:
        check_config(settings.webhooks)
        assert settings.webhooks.secret is not None  # check_config
        redact_in_logs(settings.webhooks.secret.get_secret_value())
        self.settings = settings
        self.ws = settings.webhooks
        self.topic = topic or settings.topics.alerts.name
        self.metrics = metrics or WebhookMetrics()
        self.clock = clock
        self.codec = codec or Codec()
        self.outbox = outbox or Outbox.in_dir(data_dir_of(settings))
        self._transport = transport
        self._rng = rng or random.Random()
        self._dlq_producer: Any = None
        self.deliverer: Deliverer | None = None

    # -- ingest (pure apart from the outbox and the DLQ) -------------------------------------------

    def to_notifications(
        self, records: Sequence[KafkaRecord]
    ) -> tuple[list[Notification], list[dict[str, Any]]]:
        """Split records into outbox entries and dead letters (records that are not usable alerts)."""
        notes: list[Notification] = []
        dead: list[dict[str, Any]] = []
        for rec in records:
            schema_id: int | None = None
            try:
                decoded = self.codec.decode(rec.value)
                schema_id = decoded.schema_id
                if decoded.event_type != "AlertRaised":
                    raise UnexpectedEventError(decoded.event_type)
                try:
                    note = notification(
                        decoded.record,
                        receiver=self.ws.receiver_name,
                        external_url=self.ws.external_url,
                        console_url=self.ws.console_url,
                    )
                except Exception as exc:  # valid Avro the payload builder cannot take
                    raise UnusableAlertError(exc) from exc
                notes.append(note)
            except (DecodeError, UnexpectedEventError, UnusableAlertError) as exc:
                log.warning("skipping %s[%d]@%d: %s", rec.topic, rec.partition, rec.offset, exc)
                self.metrics.skipped.labels(reason=type(exc).__name__).inc()
                dead.append(dead_letter_record(rec, exc, int(self.clock() * 1000), schema_id))
        return notes, dead

    async def ingest(self, batches: Mapping[Any, Sequence[KafkaRecord]]) -> dict[Any, int]:
        """Store a fetched batch in the outbox (and dead letters in the DLQ); return offsets to commit."""
        records = [rec for recs in batches.values() for rec in recs]
        notes, dead = self.to_notifications(records)
        if dead:
            await self._dead_letter(dead)
        added = await self.outbox.off_loop(self.outbox.add, notes, targets_of(self.ws), self.clock())
        self.metrics.ingested.inc(added)
        if self.deliverer is not None:
            self.deliverer.wake()
        return {tp: recs[-1].offset + 1 for tp, recs in batches.items() if recs}

    async def take(self, consumer: Any, batches: Mapping[Any, Sequence[KafkaRecord]]) -> bool:
        """Store a batch and commit its offsets; False, with the consumer rewound to it, if the outbox refused it.

        An outbox that cannot write (a full disk) is waited out, not fatal: nothing of the batch is
        committed, so it is read again and stored once the disk has room; the outbox ignores repeats.
        """
        try:
            offsets = await self.ingest(batches)
        except OutboxError as exc:
            log.warning("%s; reading the batch again in %.0f s", exc, OUTBOX_RETRY_S)
            for tp, recs in batches.items():
                if recs:
                    consumer.seek(tp, recs[0].offset)
            return False
        try:
            await consumer.commit(offsets)
        except KafkaError as exc:  # e.g. a rebalance: re-read later, the outbox ignores repeats
            log.warning("offset commit failed (%s); the batch will be re-read", exc)
        return True

    async def _dead_letter(self, records: list[dict[str, Any]]) -> None:
        if self._dlq_producer is None:
            self._dlq_producer = AIOKafkaProducer(
                **self.settings.kafka.aiokafka(self.settings.bootstrap_servers),
                acks="all",
                enable_idempotence=True,
                max_request_size=self.settings.topics.dlq.max_message_bytes or 1_048_576,
            )
            await self._dlq_producer.start()
        dlq = self.settings.topics.dlq.name
        for record in records:
            await self._dlq_producer.send_and_wait(
                dlq, self.codec.encode(record), key=record["event_id"].encode()
            )

    # -- lifecycle --------------------------------------------------------------------------------

    def _make_deliverer(self, client: httpx.AsyncClient) -> Deliverer:
        assert self.ws.secret is not None  # check_config
        return Deliverer(
            self.outbox,
            client,
            secret=secret_bytes(self.ws.secret.get_secret_value(), "FLEETPULSE_WEBHOOKS__SECRET"),
            policy=BackoffPolicy.from_settings(self.ws),
            metrics=self.metrics,
            max_in_flight_per_url=self.ws.max_in_flight_per_url,
            clock=self.clock,
            rng=self._rng,
            urls=targets_of(self.ws),
            scheme=self.ws.signature_scheme,
            body_for=body_for(
                [api_url(base) for base in self.ws.alertmanager_urls], self.ws.alertmanager_alert_ttl_s
            ),
        )

    async def run(self, stop: asyncio.Event, *, ready: asyncio.Event | None = None) -> None:
        """Consume and deliver until ``stop`` is set; undelivered alerts stay in the outbox for next time."""

        pruned = await self.outbox.off_loop(
            self.outbox.prune, self.clock() - self.ws.outbox_retention_days * DAY_S
        )
        if pruned:
            log.info("outbox: pruned %d delivered alerts", pruned)
        orphans = [u for u in await self.outbox.off_loop(self.outbox.urls) if u not in self.ws.urls]
        if orphans:  # kept, not sent: a URL taken out of the configuration is not called any more
            log.warning(
                "outbox has deliveries for %d URL(s) no longer configured; see fleetpulse outbox",
                len(orphans),
            )
        consumer = AIOKafkaConsumer(
            self.topic,
            group_id=self.ws.group_id,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            client_id=f"{self.settings.kafka.client_id_prefix}-webhooks",
            **self.settings.kafka.aiokafka(self.settings.bootstrap_servers),
        )
        async with httpx.AsyncClient(transport=self._transport, timeout=self.ws.timeout_s) as client:
            self.deliverer = self._make_deliverer(client)
            delivering = asyncio.create_task(self.deliverer.run(stop), name="webhook delivery")
            try:
                await self.settings.kafka.check_login_async(self.settings.bootstrap_servers)
                try:
                    await consumer.start()
                except KafkaConnectionError as exc:
                    raise WebhookError(
                        f"cannot reach Kafka at {self.settings.bootstrap_servers}: {exc}"
                    ) from exc
                if ready is not None:
                    ready.set()
                while not stop.is_set():
                    batches = await consumer.getmany(timeout_ms=200, max_records=500)
                    if batches and not await self.take(consumer, batches):
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(stop.wait(), OUTBOX_RETRY_S)
            finally:
                stop.set()
                await consumer.stop()
                await delivering
                await self.deliverer.aclose()
                if self._dlq_producer is not None:
                    await self._dlq_producer.stop()

    def close(self) -> None:
        self.outbox.close()


async def run_dispatcher(settings: Settings, stop: asyncio.Event, **kwargs: Any) -> WebhookMetrics:
    """Run a ``Dispatcher`` until ``stop``; return its metrics (the CLI prints a summary)."""
    dispatcher = Dispatcher(settings, **kwargs)
    try:
        await dispatcher.run(stop)
    finally:
        dispatcher.close()
    return dispatcher.metrics
