"""The signature scheme behind one pair of calls, and the rules a signing secret must meet.

Sender and receiver take the scheme from ``webhooks.signature_scheme``; Standard Webhooks
(``webhooks.standard``), which signs the delivery id with the body, is the only one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from ground.secret_strength import GENERATE, MIN_SECRET_BYTES, PLACEHOLDER_SECRETS, secret_problem
from webhooks.errors import WebhookConfigError
from webhooks.standard import IDEMPOTENCY_HEADER, standard_headers, verify_standard

Scheme = Literal["standard"]
__all__ = [
    "MIN_SECRET_BYTES",
    "PLACEHOLDER_SECRETS",
    "check_secret",
    "secret_problem",
    "signed_headers",
    "verify_request",
]


def check_secret(secret: bytes, where: str = "FLEETPULSE_WEBHOOKS__SECRET") -> None:
    """Refuse a weak signing secret at start-up (``ground.secret_strength``), saying what to do instead."""
    problem = secret_problem(secret)
    if problem is not None:
        raise WebhookConfigError(
            f"the webhook signing secret in {where} cannot be used: {problem}; {GENERATE}"
        )


def signed_headers(scheme: Scheme, secret: bytes, msg_id: str, body: bytes, now: float) -> dict[str, str]:
    """Headers that authenticate ``body`` and its id at ``now`` (``Idempotency-Key`` repeats the id)."""
    return {**standard_headers(secret, msg_id, body, now), IDEMPOTENCY_HEADER: msg_id}


def verify_request(
    scheme: Scheme, secret: bytes, body: bytes, headers: Mapping[str, str], now: float, tolerance_s: float
) -> str:
    """Verify a request under ``scheme``; return its delivery id (the receiver's dedup key)."""
    return verify_standard(secret, body, headers, now, tolerance_s)
