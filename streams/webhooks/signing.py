"""The ``fleetpulse-v1`` scheme: ``X-Fleetpulse-Signature: t=<unix ts>,v1=<hex HMAC-SHA256>``.

The MAC covers ``f"{t}.".encode() + body`` but not the ``Idempotency-Key``: a captured request
can be replayed within the tolerance under a new key. Kept for receivers built against it;
the default is Standard Webhooks (``streams.webhooks.standard``), which signs the id too.
"""

from __future__ import annotations

import hashlib
import hmac
import re

from streams.webhooks.errors import (
    MalformedSignatureError,
    SignatureMismatchError,
    StaleSignatureError,
)

SIGNATURE_HEADER = "X-Fleetpulse-Signature"
IDEMPOTENCY_HEADER = "Idempotency-Key"
SCHEME = "v1"
# Checked before any arithmetic or comparison: a non-ASCII value makes hmac.compare_digest
# raise, and a timestamp of thousands of digits overflows float.
_TIMESTAMP = re.compile(r"[0-9]{1,12}")
_HEX_MAC = re.compile(r"[0-9a-f]{64}")
MAX_HEADER_CHARS = 2048


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
    if len(header) > MAX_HEADER_CHARS:
        raise MalformedSignatureError()
    timestamp: int | None = None
    macs: list[str] = []
    for part in header.split(","):
        key, sep, value = part.strip().partition("=")
        if not sep:
            raise MalformedSignatureError()
        value = value.strip()
        if key == "t":
            if not _TIMESTAMP.fullmatch(value):
                raise MalformedSignatureError("signature timestamp is not an integer of at most 12 digits")
            timestamp = int(value)
        elif key == SCHEME:
            if not _HEX_MAC.fullmatch(value.lower()):
                raise MalformedSignatureError(f"{SCHEME} signature is not 64 hex digits")
            macs.append(value.lower())
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
