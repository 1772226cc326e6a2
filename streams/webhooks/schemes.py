"""The two signature schemes behind one pair of calls, and the rules a signing secret must meet.

Sender and receiver pick a scheme from ``webhooks.signature_scheme``; a receiver accepts only
its own scheme, so a request signed the weaker ``fleetpulse-v1`` way cannot reach a receiver
that expects Standard Webhooks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from ground.secret_strength import GENERATE, MIN_SECRET_BYTES, PLACEHOLDER_SECRETS, secret_problem
from streams.webhooks.errors import MalformedSignatureError, WebhookConfigError
from streams.webhooks.signing import IDEMPOTENCY_HEADER, SIGNATURE_HEADER, sign, verify_signature
from streams.webhooks.standard import standard_headers, verify_standard

Scheme = Literal["standard", "fleetpulse-v1"]
__all__ = ["MIN_SECRET_BYTES", "PLACEHOLDER_SECRETS", "check_secret", "secret_problem", "signed_headers", "verify_request"]



def check_secret(secret: bytes, where: str = "FLEETPULSE_WEBHOOKS__SECRET") -> None:
    """Refuse a weak signing secret at start-up (``ground.secret_strength``), saying what to do instead."""
    problem = secret_problem(secret)
    if problem is not None:
        raise WebhookConfigError(f"the webhook signing secret in {where} cannot be used: {problem}; {GENERATE}")


def signed_headers(scheme: Scheme, secret: bytes, msg_id: str, body: bytes, now: float) -> dict[str, str]:
    """Headers that authenticate ``body`` (and, for ``standard``, its id) at ``now``."""
    if scheme == "standard":
        return {**standard_headers(secret, msg_id, body, now), IDEMPOTENCY_HEADER: msg_id}
    return {SIGNATURE_HEADER: sign(secret, body, now), IDEMPOTENCY_HEADER: msg_id}


def verify_request(
    scheme: Scheme, secret: bytes, body: bytes, headers: Mapping[str, str], now: float, tolerance_s: float
) -> str:
    """Verify a request under ``scheme``; return its delivery id (the receiver's dedup key)."""
    if scheme == "standard":
        return verify_standard(secret, body, headers, now, tolerance_s)
    verify_signature(secret, body, headers.get(SIGNATURE_HEADER, ""), now, tolerance_s)
    key = headers.get(IDEMPOTENCY_HEADER, "")
    if not key:
        raise MalformedSignatureError(f"missing {IDEMPOTENCY_HEADER} header")
    if len(key) > 256 or not key.isascii() or not key.isprintable():
        raise MalformedSignatureError(f"{IDEMPOTENCY_HEADER} header is malformed")
    return key
