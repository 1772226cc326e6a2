from __future__ import annotations

import random

import pytest

from webhooks import BackoffPolicy
from webhooks.backoff import is_retryable, retry_after_s


def test_schedule_without_jitter_doubles_up_to_the_cap() -> None:
    policy = BackoffPolicy(base_s=1.0, max_s=10.0, jitter=0.0, max_attempts=7)
    assert policy.schedule() == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]


def test_jitter_stays_within_its_band_and_is_reproducible_with_a_seed() -> None:
    policy = BackoffPolicy(base_s=0.5, max_s=60.0, jitter=0.5, max_attempts=12)
    a = policy.schedule(random.Random(42))
    assert a == policy.schedule(random.Random(42))
    assert a != policy.schedule(random.Random(43))
    for n, delay in enumerate(a, start=1):
        ceiling = min(60.0, 0.5 * 2 ** (n - 1))
        assert ceiling * 0.5 <= delay <= ceiling


def test_huge_attempt_numbers_do_not_overflow() -> None:
    assert BackoffPolicy(base_s=1, max_s=30, jitter=0).delay(5000) == 30


def test_attempts_are_one_based() -> None:
    with pytest.raises(ValueError):
        BackoffPolicy().delay(0)


def test_exhausted_after_max_attempts() -> None:
    policy = BackoffPolicy(max_attempts=3)
    assert [policy.exhausted(n) for n in (1, 2, 3, 4)] == [False, False, True, True]


@pytest.mark.parametrize(
    ("status", "retry"),
    [
        (500, True),
        (503, True),
        (429, True),
        (408, True),
        (400, False),
        (401, False),
        (404, False),
        (302, False),
    ],
)
def test_retryable_statuses(status: int, retry: bool) -> None:
    assert is_retryable(status) is retry


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("3", 3.0), (" 1.5 ", 1.5), ("-1", None), (None, None), ("Wed, 21 Oct 2015 07:28:00 GMT", None)],
)
def test_retry_after(value: str | None, seconds: float | None) -> None:
    assert retry_after_s(value) == seconds
