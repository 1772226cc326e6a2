"""Stripe-style request signatures: ``X-Fleetpulse-Signature: t=<unix ts>,v1=<hex HMAC-SHA256>``.

The MAC covers ``f"{t}.".encode() + body``, so a receiver that checks the timestamp
rejects replays of an old, validly signed request.
"""

from __future__ import annotations

import hashlib
import hmac

from streams.webhooks.errors import (
    MalformedSignatureError,
    SignatureMismatchError,
    StaleSignatureError,
)

SIGNATURE_HEADER = "X-Fleetpulse-Signature"
IDEMPOTENCY_HEADER = "Idempotency-Key"
SCHEME = "v1"


def compute_mac(secret: bytes, body: bytes, timestamp: int) -> str:
    """Hex HMAC-SHA256 of ``"<timestamp>." + body``."""
    return hmac.new(secret, f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def sign(secret: bytes, body: bytes, now: float) -> str:
    """The signature header value for ``body`` sent at ``now`` (unix seconds)."""
    t = int(now)
    return f"t={t},{SCHEME}={compute_mac(secret, body, t)}"


def parse_signature_header(header: str | None) -> tuple[int, list[str]]:
    """``(timestamp, [v1 signatures])``; several ``v1`` entries are allowed (secret rotation)."""
    if not header:
        raise MalformedSignatureError(f"missing {SIGNATURE_HEADER} header")
    timestamp: int | None = None
    macs: list[str] = []
    for part in header.split(","):
        key, sep, value = part.strip().partition("=")
        if not sep:
            raise MalformedSignatureError()
        if key == "t":
            try:
                timestamp = int(value)
            except ValueError:
                raise MalformedSignatureError("signature timestamp is not an integer") from None
        elif key == SCHEME:
            macs.append(value.strip().lower())
    if timestamp is None:
        raise MalformedSignatureError("signature header has no t=<timestamp>")
    if not macs:
        raise MalformedSignatureError(f"signature header has no {SCHEME}=<signature>")
    return timestamp, macs


def verify_signature(secret: bytes, body: bytes, header: str, now: float, tolerance_s: float = 300) -> None:
    """Check a delivery; return None if genuine and fresh, else raise a ``SignatureError``.

    ``body`` must be the raw request bytes (not re-serialised JSON). ``now`` is the
    receiver's clock in unix seconds; timestamps more than ``tolerance_s`` away from it,
    in either direction, are rejected as replays or clock skew.
    """
    timestamp, macs = parse_signature_header(header)
    if abs(now - timestamp) > tolerance_s:
        raise StaleSignatureError(timestamp, now, tolerance_s)
    expected = compute_mac(secret, body, timestamp)
    if not any(hmac.compare_digest(expected, mac) for mac in macs):
        raise SignatureMismatchError()
