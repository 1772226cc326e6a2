"""How strong a shared secret must be (the webhook signing key, the ``/ops/events`` token), as one rule.

A secret is refused when it is a known placeholder, shorter than 32 bytes, a shorter string repeated,
or its estimated entropy is under 94 bits. The estimate is the Miller–Madow-corrected Shannon
entropy of its characters times its length: random 32-byte url-safe text scores about 200 bits,
32 random hex digits almost always over 100, ``passwordpasswordpasswordpassword`` 92.
"""

from __future__ import annotations

import math
from collections import Counter

from ground.errors import ConfigError

MIN_SECRET_BYTES = 32
MIN_ENTROPY_BITS = (
    94  # passwordpasswordpasswordpassword scores 92; 32 random hex digits fell under it 0 times in 300,000
)
GENERATE = 'generate one with: python -c "import secrets; print(secrets.token_urlsafe(32))"'
# Values found in examples and templates: anyone can sign with them.
PLACEHOLDER_SECRETS = frozenset(
    {
        "change-me",
        "changeme",
        "change_me",
        "secret",
        "password",
        "replace-me",
        "your-secret",
        "test",
        "example",
    }
)


def entropy_bits(secret: bytes) -> float:
    """Estimated bits of ``secret``: Shannon entropy of its bytes (Miller–Madow corrected) × its length."""
    n = len(secret)
    if n == 0:
        return 0.0
    counts = Counter(secret).values()
    nats = -sum(c / n * math.log(c / n) for c in counts) + (len(counts) - 1) / (2 * n)
    return nats / math.log(2) * n


def _period(secret: bytes) -> int | None:
    """The length of the shorter string ``secret`` repeats, if it is one repeated."""
    n = len(secret)
    for k in range(1, n // 2 + 1):
        if secret[:k] * (n // k) + secret[: n % k] == secret:
            return k
    return None


def secret_problem(secret: bytes) -> str | None:
    """Why ``secret`` must not be used, or None if it may."""
    text = secret.decode(errors="replace").strip().lower()
    if text in PLACEHOLDER_SECRETS or "change-me" in text or "changeme" in text:
        return "it is a placeholder value"
    if len(secret) < MIN_SECRET_BYTES:
        return f"it has {len(secret)} bytes, at least {MIN_SECRET_BYTES} are required"
    if len(set(secret)) == 1:
        return "it repeats one character"
    period = _period(secret)
    if period is not None:
        return f"it repeats a string of {period} characters"
    bits = entropy_bits(secret)
    if bits < MIN_ENTROPY_BITS:
        return f"it is too predictable (about {bits:.0f} bits estimated, at least {MIN_ENTROPY_BITS} are required)"
    return None


def secret_bytes(value: str, where: str) -> bytes:
    """The UTF-8 bytes of a configured secret; a value that is not UTF-8 text is a one-line ConfigError.

    The environment hands undecodable bytes over as lone surrogates, which ``str.encode`` refuses.
    """
    try:
        return value.encode()
    except UnicodeEncodeError:
        raise ConfigError(f"the secret in {where} is not UTF-8 text; {GENERATE}") from None


def check_strength(value: str, where: str, what: str) -> bytes:
    """The bytes of a strong secret; a ConfigError naming ``where`` and what to do otherwise."""
    secret = secret_bytes(value, where)
    problem = secret_problem(secret)
    if problem is not None:
        raise ConfigError(f"{what} in {where} cannot be used: {problem}; {GENERATE}")
    return secret
