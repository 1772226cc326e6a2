"""Standard Webhooks signing: interoperable with the reference ``standardwebhooks`` verifier, id bound to the MAC."""

from __future__ import annotations

import base64
import time

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from webhooks import SignatureMismatchError, StaleSignatureError
from webhooks.schemes import check_secret, secret_problem, signed_headers, verify_request
from webhooks.standard import standard_headers, verify_standard

SECRET = b"a-signing-secret-of-32-bytes-or-more"
BODY = b'{"version":"4","alerts":[]}'
NOW = 1_700_000_000.0


def test_the_reference_verifier_accepts_our_deliveries() -> None:
    headers = standard_headers(SECRET, "alert-7", BODY, time.time())
    assert Webhook(SECRET).verify(BODY, headers) == {"version": "4", "alerts": []}
    # receivers in other languages take the key as whsec_<base64>: the same bytes
    assert Webhook("whsec_" + base64.b64encode(SECRET).decode()).verify(BODY, headers)


def test_the_reference_verifier_rejects_a_changed_id() -> None:
    headers = {**standard_headers(SECRET, "alert-7", BODY, time.time()), "webhook-id": "alert-8"}
    with pytest.raises(WebhookVerificationError):
        Webhook(SECRET).verify(BODY, headers)


def test_verify_returns_the_signed_id() -> None:
    headers = standard_headers(SECRET, "alert-7", BODY, NOW)
    assert verify_standard(SECRET, BODY, headers, now=NOW + 10) == "alert-7"


def test_stale_and_tampered() -> None:
    headers = standard_headers(SECRET, "alert-7", BODY, NOW)
    with pytest.raises(StaleSignatureError):
        verify_standard(SECRET, BODY, headers, now=NOW + 301)
    with pytest.raises(SignatureMismatchError):
        verify_standard(SECRET, BODY + b" ", headers, now=NOW)
    with pytest.raises(SignatureMismatchError):
        verify_standard(SECRET, BODY, {**headers, "webhook-timestamp": str(int(NOW) + 1)}, now=NOW)


def test_a_rotated_key_and_unknown_versions_are_tolerated() -> None:
    ours = standard_headers(SECRET, "a", BODY, NOW)
    other = standard_headers(b"another-key-also-32-bytes-long-yes", "a", BODY, NOW)["webhook-signature"]
    headers = {**ours, "webhook-signature": f"v1a,abc= {other} {ours['webhook-signature']}"}
    assert verify_standard(SECRET, BODY, headers, now=NOW) == "a"


def test_the_scheme_round_trips() -> None:
    headers = signed_headers("standard", SECRET, "alert-9", BODY, NOW)
    assert verify_request("standard", SECRET, BODY, headers, NOW, 300) == "alert-9"


@pytest.mark.parametrize(
    "secret",
    [b"", b"change-me", b"CHANGE-ME", b"s3cret-but-short", b"a" * 64, b"change-me-please-change-me-please!"],
)
def test_weak_secrets(secret: bytes) -> None:
    assert secret_problem(secret) is not None


def test_a_generated_secret_is_fine() -> None:
    import secrets

    check_secret(secrets.token_urlsafe(32).encode())
    check_secret(secrets.token_hex(16).encode())  # what `fleetpulse demo` generates: 32 bytes
