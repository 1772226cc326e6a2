"""``--from`` / ``--to`` as event-time milliseconds: ISO 8601 (UTC unless an offset is given) or epoch ms."""

from __future__ import annotations

import datetime as dt

from fleetpulse.backtest.errors import BacktestError


def parse_time(text: str | None, option: str) -> int | None:
    """Epoch ms of ``text`` (None stays None: that side of the period is open)."""
    if text is None:
        return None
    if text.strip().isdigit():
        return int(text)
    try:
        when = dt.datetime.fromisoformat(text.strip())
    except ValueError as exc:
        raise BacktestError(f"{option} {text!r}: want ISO 8601 (2025-01-01T00:00) or epoch ms") from exc
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return int(when.timestamp() * 1000)
