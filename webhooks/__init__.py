"""Alert webhooks: durable outbox, signed delivery with retries, receiver-side verification.

Names load lazily (PEP 562) so ``fleetpulse --help`` does not pay for httpx and aiohttp.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from webhooks.backoff import BackoffPolicy
    from webhooks.delivery import Deliverer, Outcome
    from webhooks.dispatcher import Dispatcher, check_config, data_dir_of, run_dispatcher
    from webhooks.errors import (
        MalformedSignatureError,
        OutboxError,
        SignatureError,
        SignatureMismatchError,
        StaleSignatureError,
        WebhookConfigError,
        WebhookError,
    )
    from webhooks.metrics import WebhookMetrics, redact_url
    from webhooks.outbox import Delivery, DeliveryRow, Outbox, OutboxStats
    from webhooks.payload import Notification, alertmanager_body, fingerprint, notification
    from webhooks.receiver import ReceiverHandle, ReceiverStats, WebhookReceiver, start_receiver
    from webhooks.standard import (
        IDEMPOTENCY_HEADER,
        SIGNATURE_HEADER,
        standard_headers,
        verify_standard,
    )

_EXPORTS: dict[str, str] = {
    "BackoffPolicy": "webhooks.backoff",
    "Deliverer": "webhooks.delivery",
    "Outcome": "webhooks.delivery",
    "Dispatcher": "webhooks.dispatcher",
    "check_config": "webhooks.dispatcher",
    "data_dir_of": "webhooks.dispatcher",
    "run_dispatcher": "webhooks.dispatcher",
    "MalformedSignatureError": "webhooks.errors",
    "OutboxError": "webhooks.errors",
    "SignatureError": "webhooks.errors",
    "SignatureMismatchError": "webhooks.errors",
    "StaleSignatureError": "webhooks.errors",
    "WebhookConfigError": "webhooks.errors",
    "WebhookError": "webhooks.errors",
    "WebhookMetrics": "webhooks.metrics",
    "redact_url": "webhooks.metrics",
    "Delivery": "webhooks.outbox",
    "DeliveryRow": "webhooks.outbox",
    "Outbox": "webhooks.outbox",
    "OutboxStats": "webhooks.outbox",
    "Notification": "webhooks.payload",
    "alertmanager_body": "webhooks.payload",
    "fingerprint": "webhooks.payload",
    "notification": "webhooks.payload",
    "ReceiverHandle": "webhooks.receiver",
    "ReceiverStats": "webhooks.receiver",
    "WebhookReceiver": "webhooks.receiver",
    "start_receiver": "webhooks.receiver",
    "IDEMPOTENCY_HEADER": "webhooks.standard",
    "SIGNATURE_HEADER": "webhooks.standard",
    "standard_headers": "webhooks.standard",
    "verify_standard": "webhooks.standard",
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
