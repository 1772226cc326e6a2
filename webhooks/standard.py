"""Standard Webhooks signatures (https://www.standardwebhooks.com): the default scheme.

``webhook-signature: v1,<base64 HMAC-SHA256>`` covers ``f"{webhook-id}.{webhook-timestamp}.{body}"``,
so neither the id (the receiver's dedup key) nor the time can be changed without the key. The
HMAC comes from the ``standardwebhooks`` package; verification is done here because the
package's ``verify`` reads the wall clock and fixes the tolerance at five minutes.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Mapping
from datetime import UTC, datetime

from standardwebhooks.webhooks import Webhook

from webhooks.errors import (
    MalformedSignatureError,
    SignatureMismatchError,
    StaleSignatureError,
)

ID_HEADER = "webhook-id"
TIMESTAMP_HEADER = "webhook-timestamp"
SIGNATURE_HEADER = "webhook-signature"
IDEMPOTENCY_HEADER = "Idempotency-Key"  # the id again, for receivers that deduplicate on this header

# Shapes are checked before any arithmetic or comparison: a non-ASCII signature makes
# hmac.compare_digest raise, a timestamp of thousands of digits overflows float.
_ID = re.compile(r"[\x21-\x7e]{1,256}")
_TIMESTAMP = re.compile(r"[0-9]{1,12}")
_V1 = re.compile(r"v1,[A-Za-z0-9+/]{43}=")
_ANY_ENTRY = re.compile(r"[a-z0-9]{1,8},[A-Za-z0-9+/=]{1,128}")  # other versions (v1a) are skipped
MAX_SIGNATURES = 16  # several keys during a rotation, not thousands


def _mac(secret: bytes, msg_id: str, timestamp: int, body: bytes) -> str:
    return Webhook(secret).sign(msg_id, datetime.fromtimestamp(timestamp, tz=UTC), body)


def standard_headers(secret: bytes, msg_id: str, body: bytes, now: float) -> dict[str, str]:
    """The three headers of a delivery of ``body`` with id ``msg_id`` sent at ``now`` (unix s)."""
    t = int(now)
    return {ID_HEADER: msg_id, TIMESTAMP_HEADER: str(t), SIGNATURE_HEADER: _mac(secret, msg_id, t, body)}


def _header(headers: Mapping[str, str], name: str, shape: re.Pattern[str]) -> str:
    value = headers.get(name)
    if not value:
        raise MalformedSignatureError(f"missing {name} header")
    if not shape.fullmatch(value):
        raise MalformedSignatureError(f"{name} header is malformed")
    return value


def verify_standard(
    secret: bytes, body: bytes, headers: Mapping[str, str], now: float, tolerance_s: float = 300
) -> str:
    """Check a delivery and return its ``webhook-id``; raise a ``SignatureError`` otherwise.

    ``headers`` is looked up by the lower-case names above (aiohttp's and httpx's header
    mappings are case-insensitive). ``body`` must be the raw request bytes.
    """
    msg_id = _header(headers, ID_HEADER, _ID)
    timestamp = int(_header(headers, TIMESTAMP_HEADER, _TIMESTAMP))
    entries = headers.get(SIGNATURE_HEADER, "").split(" ")
    if not entries[0]:
        raise MalformedSignatureError(f"missing {SIGNATURE_HEADER} header")
    if len(entries) > MAX_SIGNATURES or not all(_ANY_ENTRY.fullmatch(e) for e in entries):
        raise MalformedSignatureError(f"{SIGNATURE_HEADER} header is malformed")
    candidates = [e for e in entries if _V1.fullmatch(e)]
    if not candidates:
        raise MalformedSignatureError(f"{SIGNATURE_HEADER} header has no v1 signature")
    if abs(now - timestamp) > tolerance_s:
        raise StaleSignatureError(timestamp, now, tolerance_s)
    expected = _mac(secret, msg_id, timestamp, body).encode()
    if not any(hmac.compare_digest(expected, c.encode()) for c in candidates):
        raise SignatureMismatchError()
    return msg_id
