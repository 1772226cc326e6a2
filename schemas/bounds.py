"""The bounds every way in checks before a value becomes an event: times, ids, text, counts, XIDs.

The importer, ``ops record``, ``POST /ops/events`` and the host agent check against these (the
webhook receiver takes alerts, and checks strict JSON), so a value the detector would dead-letter
(or worse, fold) is refused where it enters, as a bad row or a 400, never as a crash or a silently
wrapped number. The detect worker checks ``fleet.actions`` records against ``check_not_ahead``.
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any

from schemas.errors import BoundsError

MIN_TS_MS = 946_684_800_000  # 2000-01-01T00:00:00Z: anything older is a broken clock or a typo
FUTURE_TOLERANCE_MS = 24 * 3_600_000  # clocks and time zones drift; a day ahead is a wrong time
LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1  # Avro long
INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1  # Avro int
XID_MAX = INT_MAX  # NVIDIA XIDs are small numbers; the schema's int is the hard limit
MAX_ID_CHARS = 128
# hostnames, FQDNs, inventory ids: they become table keys, file names, log text and a metrics label
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/-]*")
ID_RULE = f"1..{MAX_ID_CHARS} of A-Z a-z 0-9 . _ : @ / -, starting with a letter or digit, no '..'"
MAX_TEXT_CHARS = 4096  # reasons, source texts, kernel messages: enough to read, too little to flood
_TEXT_CONTROL = frozenset(
    {"Cc", "Cf", "Cs", "Co", "Cn"}
)  # controls, bidi/format, surrogates, private, unassigned


def check_ts(ts: Any, now_ms: int, *, what: str = "time") -> int:
    """``ts`` (epoch ms) when it lies in [2000-01-01, now + a day]; BoundsError otherwise."""
    if isinstance(ts, bool) or not isinstance(ts, int):
        raise BoundsError(f"{what} {ts!r} is not a whole number of epoch milliseconds")
    if ts < MIN_TS_MS:
        raise BoundsError(f"{what} {ts} is before 2000-01-01")
    return check_not_ahead(ts, now_ms, what=what)


def check_not_ahead(ts: int, now_ms: int, *, what: str = "time") -> int:
    """``ts`` when it is at most a day after now; BoundsError otherwise (a clock that only moves forward
    would stay there for good)."""
    if ts > now_ms + FUTURE_TOLERANCE_MS:
        raise BoundsError(f"{what} {ts} is more than a day after now ({now_ms})")
    return ts


def ms_from_number(number: float, scale: float) -> int:
    """Epoch ms of a parsed number times ``scale``; BoundsError for NaN, infinities and beyond a long."""
    if not math.isfinite(number):
        raise BoundsError(f"time {number!r} is not a finite number")
    ms = number * scale
    if not LONG_MIN <= ms <= LONG_MAX:
        raise BoundsError(f"time {number!r} is beyond any date")
    return round(ms)


def valid_id(value: object) -> bool:
    """True for an id within the host-id rule (``ID_RULE``)."""
    return (
        isinstance(value, str)
        and len(value) <= MAX_ID_CHARS
        and ID_PATTERN.fullmatch(value) is not None
        and ".." not in value
    )


def check_id(value: object, *, what: str = "host id") -> str:
    if not valid_id(value):
        shown = value[:40] if isinstance(value, str) else value
        raise BoundsError(f"{what} {shown!r} breaks the id rule ({ID_RULE})")
    return value  # type: ignore[return-value]


def check_long(value: Any, *, what: str = "value", low: int = LONG_MIN, high: int = LONG_MAX) -> int:
    """An integer within [low, high] (by default an Avro long); BoundsError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise BoundsError(f"{what} {value!r} is not an integer")
    if not low <= value <= high:
        raise BoundsError(f"{what} {value} is outside {low}..{high}")
    return value


def check_int(value: Any, *, what: str = "value") -> int:
    """An integer within an Avro int."""
    return check_long(value, what=what, low=INT_MIN, high=INT_MAX)


def clamp(value: int, low: int, high: int) -> int:
    return low if value < low else high if value > high else value


def strip_controls(text: str) -> str:
    """``text`` without control, format (bidi) and surrogate characters; tabs and newlines become spaces."""
    if text.isprintable():  # the common case costs one C call
        return text
    return "".join(
        " " if ch in "\t\n\r" else ch
        for ch in text
        if ch in "\t\n\r" or unicodedata.category(ch) not in _TEXT_CONTROL
    )


def cut_text(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """Printable text of at most ``limit`` characters (a cut one ends with an ellipsis)."""
    clean = strip_controls(text)
    return clean if len(clean) <= limit else clean[: limit - 1] + "…"


def terminal_safe(text: str) -> str:
    """``text`` for a terminal: control and bidi characters shown as escapes, never interpreted."""
    if text.isprintable():
        return text
    return "".join(
        ch if ch.isprintable() else ch.encode("unicode_escape", "backslashreplace").decode("ascii")
        for ch in text
    )
