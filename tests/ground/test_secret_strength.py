"""The one strength rule for shared secrets (webhook key, operator token)."""

from __future__ import annotations

import secrets

import pytest

from ground.errors import ConfigError
from ground.secret_strength import MIN_ENTROPY_BITS, check_strength, entropy_bits, secret_problem


@pytest.mark.parametrize(
    ("secret", "why"),
    [
        (b"a", "bytes"),
        (b"change-me-please-0123456789abcdefgh", "placeholder"),
        (b"passwordpasswordpasswordpassword", "repeats a string of 8"),
        (b"x" * 40, "one character"),
        (b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaabbbc", "too predictable"),
        (b"0101010101010101010101010101010123", "too predictable"),
    ],
)
def test_weak_secrets_are_refused_with_the_reason(secret: bytes, why: str) -> None:
    problem = secret_problem(secret)
    assert problem is not None and why in problem


def test_the_entropy_estimate_alone_refuses_the_repeated_password() -> None:
    assert entropy_bits(b"passwordpasswordpasswordpassword") < MIN_ENTROPY_BITS


def test_generated_secrets_pass() -> None:
    for _ in range(200):
        assert secret_problem(secrets.token_urlsafe(32).encode()) is None
        assert secret_problem(secrets.token_hex(16).encode()) is None


def test_check_strength_says_where_and_never_the_value() -> None:
    with pytest.raises(ConfigError, match="FLEETPULSE_DETECT__OPS_TOKEN") as caught:
        check_strength("hunter2", "FLEETPULSE_DETECT__OPS_TOKEN", "the operator token")
    assert "hunter2" not in str(caught.value)
    with pytest.raises(ConfigError, match="not UTF-8"):
        check_strength("\udcff" * 40, "FLEETPULSE_DETECT__OPS_TOKEN", "the operator token")
