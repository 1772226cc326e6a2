"""Alert webhooks: durable outbox, signed delivery with retries, receiver-side verification.

Names load lazily (PEP 562) so ``fleetpulse --help`` does not pay for httpx and aiohttp.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from streams.webhooks.backoff import BackoffPolicy
    from streams.webhooks.delivery import Deliverer, Outcome
    from streams.webhooks.dispatcher import Dispatcher, check_config, data_dir_of, run_dispatcher
    from streams.webhooks.errors import (
        MalformedSignatureError,
        OutboxError,
        SignatureError,
        SignatureMismatchError,
        StaleSignatureError,
        WebhookConfigError,
        WebhookError,
    )
    from streams.webhooks.metrics import WebhookMetrics, redact_url
    from streams.webhooks.outbox import Delivery, DeliveryRow, Outbox, OutboxStats
    from streams.webhooks.payload import Notification, alertmanager_body, fingerprint, notification
    from streams.webhooks.receiver import ReceiverHandle, ReceiverStats, WebhookReceiver, start_receiver
    from streams.webhooks.standard import (
        IDEMPOTENCY_HEADER,
        SIGNATURE_HEADER,
        standard_headers,
        verify_standard,
    )

_EXPORTS: dict[str, str] = {
    "BackoffPolicy": "streams.webhooks.backoff",
    "Deliverer": "streams.webhooks.delivery",
    "Outcome": "streams.webhooks.delivery",
    "Dispatcher": "streams.webhooks.dispatcher",
    "check_config": "streams.webhooks.dispatcher",
    "data_dir_of": "streams.webhooks.dispatcher",
    "run_dispatcher": "streams.webhooks.dispatcher",
    "MalformedSignatureError": "streams.webhooks.errors",
    "OutboxError": "streams.webhooks.errors",
    "SignatureError": "streams.webhooks.errors",
    "SignatureMismatchError": "streams.webhooks.errors",
    "StaleSignatureError": "streams.webhooks.errors",
    "WebhookConfigError": "streams.webhooks.errors",
    "WebhookError": "streams.webhooks.errors",
    "WebhookMetrics": "streams.webhooks.metrics",
    "redact_url": "streams.webhooks.metrics",
    "Delivery": "streams.webhooks.outbox",
    "DeliveryRow": "streams.webhooks.outbox",
    "Outbox": "streams.webhooks.outbox",
    "OutboxStats": "streams.webhooks.outbox",
    "Notification": "streams.webhooks.payload",
    "alertmanager_body": "streams.webhooks.payload",
    "fingerprint": "streams.webhooks.payload",
    "notification": "streams.webhooks.payload",
    "ReceiverHandle": "streams.webhooks.receiver",
    "ReceiverStats": "streams.webhooks.receiver",
    "WebhookReceiver": "streams.webhooks.receiver",
    "start_receiver": "streams.webhooks.receiver",
    "IDEMPOTENCY_HEADER": "streams.webhooks.standard",
    "SIGNATURE_HEADER": "streams.webhooks.standard",
    "standard_headers": "streams.webhooks.standard",
    "verify_standard": "streams.webhooks.standard",
}

__all__ = [
    "BackoffPolicy",
    "Deliverer",
    "Delivery",
    "DeliveryRow",
    "Dispatcher",
    "IDEMPOTENCY_HEADER",
    "MalformedSignatureError",
    "Notification",
    "Outbox",
    "OutboxError",
    "OutboxStats",
    "Outcome",
    "ReceiverHandle",
    "ReceiverStats",
    "SIGNATURE_HEADER",
    "SignatureError",
    "SignatureMismatchError",
    "StaleSignatureError",
    "WebhookConfigError",
    "WebhookError",
    "WebhookMetrics",
    "WebhookReceiver",
    "alertmanager_body",
    "check_config",
    "data_dir_of",
    "fingerprint",
    "notification",
    "redact_url",
    "run_dispatcher",
    "standard_headers",
    "start_receiver",
    "verify_standard",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
