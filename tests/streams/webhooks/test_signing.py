from __future__ import annotations

import pytest

from streams.webhooks import (
    MalformedSignatureError,
    SignatureError,
    SignatureMismatchError,
    StaleSignatureError,
    sign,
    verify_signature,
)
from streams.webhooks.signing import compute_mac

SECRET = b"whsec_test"
BODY = b'{"version":"4","alerts":[]}'
NOW = 1_700_000_000.0


def test_signed_body_verifies() -> None:
    header = sign(SECRET, BODY, NOW)
    assert header.startswith(f"t={int(NOW)},v1=")
    verify_signature(SECRET, BODY, header, now=NOW + 10)


def test_header_is_stripe_style_hmac_of_timestamp_dot_body() -> None:
    import hashlib
    import hmac

    expected = hmac.new(SECRET, f"{int(NOW)}.".encode() + BODY, hashlib.sha256).hexdigest()
    assert sign(SECRET, BODY, NOW) == f"t={int(NOW)},v1={expected}"


@pytest.mark.parametrize(
    ("signing_secret", "received_body"),
    [(b"other-secret", BODY), (SECRET, BODY + b" "), (SECRET, b"{}")],
    ids=["wrong-secret", "body-tampered", "other-body"],
)
def test_wrong_signature_is_rejected(signing_secret: bytes, received_body: bytes) -> None:
    header = sign(signing_secret, BODY, NOW)
    with pytest.raises(SignatureMismatchError):
        verify_signature(SECRET, received_body, header, now=NOW)


def test_old_timestamp_is_rejected_even_with_a_valid_mac() -> None:
    header = sign(SECRET, BODY, NOW - 301)  # a captured request replayed 5 minutes later
    with pytest.raises(StaleSignatureError) as info:
        verify_signature(SECRET, BODY, header, now=NOW, tolerance_s=300)
    assert info.value.timestamp == int(NOW - 301)
    verify_signature(SECRET, BODY, header, now=NOW, tolerance_s=400)  # same header, wider tolerance: fine


def test_future_timestamp_beyond_tolerance_is_rejected() -> None:
    with pytest.raises(StaleSignatureError):
        verify_signature(SECRET, BODY, sign(SECRET, BODY, NOW + 1000), now=NOW)


def test_timestamp_cannot_be_swapped_onto_an_old_mac() -> None:
    old = sign(SECRET, BODY, NOW - 3600)
    mac = old.split("v1=")[1]
    with pytest.raises(SignatureMismatchError):
        verify_signature(SECRET, BODY, f"t={int(NOW)},v1={mac}", now=NOW)


def test_any_of_several_v1_signatures_may_match() -> None:
    good = compute_mac(SECRET, BODY, int(NOW))
    verify_signature(SECRET, BODY, f"t={int(NOW)},v1={'0' * 64},v1={good}", now=NOW)


@pytest.mark.parametrize(
    "header", ["", "garbage", "t=abc,v1=00", "v1=00", f"t={int(NOW)}", f"t={int(NOW)},v0=00"]
)
def test_malformed_headers(header: str) -> None:
    with pytest.raises(MalformedSignatureError):
        verify_signature(SECRET, BODY, header, now=NOW)


def test_errors_never_contain_the_secret_or_the_expected_mac() -> None:
    expected = compute_mac(SECRET, BODY, int(NOW))
    for header in (f"t={int(NOW)},v1=deadbeef", sign(SECRET, BODY, NOW - 10_000), "nonsense"):
        with pytest.raises(SignatureError) as info:
            verify_signature(SECRET, BODY, header, now=NOW)
        text = f"{info.value} {info.value!r}"
        assert SECRET.decode() not in text
        assert expected not in text
