"""The shared bounds of every way in (``schemas.bounds``)."""

from __future__ import annotations

import pytest

from schemas import BoundsError
from schemas.bounds import (
    FUTURE_TOLERANCE_MS,
    MIN_TS_MS,
    check_id,
    check_int,
    check_long,
    check_ts,
    cut_text,
    ms_from_number,
    terminal_safe,
    valid_id,
)

NOW = 1_800_000_000_000


def test_times_lie_between_2000_and_a_day_from_now() -> None:
    assert check_ts(MIN_TS_MS, NOW) == MIN_TS_MS
    assert check_ts(NOW + FUTURE_TOLERANCE_MS, NOW) == NOW + FUTURE_TOLERANCE_MS
    for bad in (MIN_TS_MS - 1, NOW + FUTURE_TOLERANCE_MS + 1, 2**63, -1, 1.5e12, True, "1"):
        with pytest.raises(BoundsError):
            check_ts(bad, NOW)


@pytest.mark.parametrize("number", [float("nan"), float("inf"), -float("inf"), 1e300])
def test_numbers_that_are_no_time_are_refused(number: float) -> None:
    with pytest.raises(BoundsError):
        ms_from_number(number, 1000)


def test_the_host_id_rule() -> None:
    for good in ("node-1", "c0-h0001", "gpu01.dc1.example.com", "rack:3/node_7@dc"):
        assert valid_id(good) and check_id(good) == good
    for bad in ("", "-x", "../../etc", "a/../b", "a b", "nöde", "x\x1b", "h" * 129, None, 3):
        assert not valid_id(bad)
    with pytest.raises(BoundsError, match="id rule"):
        check_id("../../etc")


def test_integers_within_their_avro_type() -> None:
    assert check_long(2**63 - 1) == 2**63 - 1 and check_int(2**31 - 1) == 2**31 - 1
    for bad in (2**63, -(2**63) - 1, 1.0, True):
        with pytest.raises(BoundsError):
            check_long(bad)
    with pytest.raises(BoundsError):
        check_int(2**31)


def test_texts_lose_controls_and_are_cut() -> None:
    assert cut_text("a\x00b\x1b[31mc\u202ed\u2066e\ud800f\tg") == "ab[31mcdef g"
    assert cut_text("x" * 10, 5) == "xxxx…"
    assert cut_text("plain text") == "plain text"


def test_terminal_safe_shows_controls_as_escapes() -> None:
    assert terminal_safe("evil\x1b[2J\x00\u202e") == "evil\\x1b[2J\\x00\\u202e"
    assert terminal_safe("node-1 ok") == "node-1 ok"
