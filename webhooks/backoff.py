"""Retry schedule for deliveries: exponential backoff with jitter, a cap per delay and per attempt count."""

from __future__ import annotations

import random
from dataclasses import dataclass

from ground.settings.detect import WebhookSettings

# 4xx answers worth retrying (the receiver may recover); other 4xx are final, as in Alertmanager.
RETRYABLE_4XX = frozenset({408, 425, 429})


@dataclass(frozen=True, slots=True)
class BackoffPolicy:
    """``delay(n)`` after the n-th failed attempt: ``min(max_s, base_s * 2**(n-1))`` minus up to ``jitter`` of it."""

    base_s: float = 1.0
    max_s: float = 300.0
    jitter: float = 0.5
    max_attempts: int = 12

    @classmethod
    def from_settings(cls, settings: WebhookSettings) -> BackoffPolicy:
        return cls(
            base_s=settings.backoff_base_s,
            max_s=settings.backoff_max_s,
            jitter=settings.backoff_jitter,
            max_attempts=settings.max_attempts,
        )

    def delay(self, attempt: int, rand: float = 1.0) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based); ``rand`` in [0, 1)."""
        if attempt < 1:
            raise ValueError(f"attempt is 1-based, got {attempt}")
        # 2**n overflows floats long before any sane cap matters; clamp the exponent.
        ceiling = min(self.max_s, self.base_s * 2.0 ** min(attempt - 1, 1000))
        return ceiling * (1.0 - self.jitter * rand)

    def exhausted(self, attempts: int) -> bool:
        """True once ``attempts`` deliveries failed: the item goes dead instead of being retried."""
        return attempts >= self.max_attempts

    def schedule(self, rng: random.Random | None = None) -> list[float]:
        """Every delay between the first and the last attempt (``max_attempts - 1`` values)."""
        rng = rng or random.Random()
        return [self.delay(n, rng.random()) for n in range(1, self.max_attempts)]


def is_retryable(status: int) -> bool:
    """Whether an HTTP status calls for another attempt (5xx and a few 4xx); 2xx never reaches here."""
    return status >= 500 or status in RETRYABLE_4XX


def retry_after_s(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header in its delta-seconds form; HTTP dates are ignored."""
    if not value:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None
