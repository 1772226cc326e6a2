"""Exception hierarchy of the alert webhooks (dispatcher, outbox, receiver-side verification).

    WebhookError                     (a ground.errors.FleetpulseError)
    ├── WebhookConfigError           missing secret or URLs; the message says what to set (also a ConfigError)
    ├── OutboxError                  the SQLite outbox could not be opened or written (carries the path)
    ├── UnexpectedEventError         a decodable event of another type on the alerts topic (dead-lettered)
    └── SignatureError               a delivery failed verification (carries ``reason``)
        ├── MalformedSignatureError  a webhook-* header missing or malformed
        ├── StaleSignatureError      timestamp outside the tolerance (a replay, or clock skew)
        └── SignatureMismatchError   no ``v1`` matches the HMAC of the body

No message ever contains the secret or an expected signature.
"""

from __future__ import annotations

from pathlib import Path

from ground.errors import ConfigError, FleetpulseError


class WebhookError(FleetpulseError):
    """Base of every error of ``webhooks``."""


class WebhookConfigError(WebhookError, ConfigError):
    """The webhook configuration cannot work; raised at start-up."""


class OutboxError(WebhookError):
    """The durable outbox failed; nothing was acknowledged to Kafka for the affected batch."""

    def __init__(self, path: Path | str, message: str) -> None:
        super().__init__(f"outbox {path}: {message}")
        self.path = Path(path)


class UnexpectedEventError(WebhookError):
    """A well-formed event of another type on the alerts topic; ``reason`` goes to the dead letter."""

    def __init__(self, event_type: str) -> None:
        super().__init__(f"{event_type} on the alerts topic (expected AlertRaised)")
        self.event_type = event_type
        self.reason = str(self)


class SignatureError(WebhookError):
    """A webhook request failed signature verification."""

    reason = "invalid signature"

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or self.reason)


class MalformedSignatureError(SignatureError):
    reason = "malformed signature header"


class StaleSignatureError(SignatureError):
    reason = "timestamp outside tolerance"

    def __init__(self, timestamp: int, now: float, tolerance_s: float) -> None:
        super().__init__(f"{self.reason}: signed at {timestamp}, now {now:.0f}, tolerance {tolerance_s:g} s")
        self.timestamp = timestamp
        self.now = now
        self.tolerance_s = tolerance_s


class SignatureMismatchError(SignatureError):
    reason = "signature does not match the body"


class UnusableAlertError(WebhookError):
    """An AlertRaised whose content no notification can be built from (e.g. a ``ts`` out of range)."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(f"alert cannot be rendered: {type(cause).__name__}: {cause}")
        self.reason = str(self)
