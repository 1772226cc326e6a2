"""Rows → incidents: times read (absolute, epoch or relative to ``--start``), start/end pairs matched.

Pure: a row that cannot be read becomes a ``BadRow`` with its reason and the rest go on. Event-
shaped traces (one row per start or end) are paired per host, class and component, oldest
open start first; a start never ended is an open incident (no ``end_ts``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from producers.importer.mapping import UNIT_MS, HistoryMapping
from producers.importer.sources import BadRow, Row


@dataclass(frozen=True, slots=True)
class Incident:
    row: int
    host_id: str
    start_ts: int
    end_ts: int | None
    source_class: str
    source_text: str
    component: str | None
    component_kind: str | None


class RowError(ValueError):
    """Why one row cannot become (part of) an incident."""


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def parse_time(value: Any, mapping: HistoryMapping, start_ms: int | None) -> int | None:
    """Epoch ms of a time cell; None for an empty one. RowError says what is wrong."""
    text = _text(value)
    if not text:
        return None
    try:
        number = float(text)
    except ValueError:
        number = None
    if number is not None:
        if mapping.time.epoch is not None:
            return round(number * (1000 if mapping.time.epoch == "s" else 1))
        if start_ms is None:
            raise RowError(f"relative time {text!r} needs --start (or [time] epoch in the mapping)")
        return start_ms + round(number * UNIT_MS[mapping.time.relative_unit])
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        raise RowError(f"unparseable time {text!r} (ISO 8601, or a number)") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return round(when.timestamp() * 1000)


def parse_start(text: str) -> int:
    """``--start``: an ISO 8601 date or time (UTC when no zone is given) → epoch ms."""
    when = dt.datetime.fromisoformat(text)
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return round(when.timestamp() * 1000)


def to_incidents(
    rows: Iterable[Row], mapping: HistoryMapping, start_ms: int | None
) -> tuple[list[Incident], list[BadRow]]:
    """The incidents the rows describe, and the rows that describe none (with why)."""
    if mapping.columns.event_shaped:
        return _paired(rows, mapping, start_ms)
    out: list[Incident] = []
    bad: list[BadRow] = []
    c = mapping.columns
    for row in rows:
        try:
            start = parse_time(row.fields.get(c.start), mapping, start_ms)
            if start is None:
                raise RowError(f"no start time in column {c.start!r}")
            end = parse_time(row.fields.get(c.end), mapping, start_ms)
            if end is not None and end < start:
                raise RowError(f"ends before it starts ({c.end} < {c.start})")
            out.append(_incident(row, mapping, start, end))
        except RowError as exc:
            bad.append(BadRow(row.number, str(exc)))
    return out, bad


def _incident(row: Row, mapping: HistoryMapping, start: int, end: int | None) -> Incident:
    c = mapping.columns
    host = _text(row.fields.get(c.host))
    if not host:
        raise RowError(f"no host in column {c.host!r}")
    source_class = _text(row.fields.get(c.source_class))
    if not source_class:
        raise RowError(f"no class in column {c.source_class!r}")
    component = _text(row.fields.get(c.component)) or None
    kind = _text(row.fields.get(c.component_kind)) or None
    return Incident(
        row=row.number,
        host_id=mapping.inventory.host_prefix + host,
        start_ts=start,
        end_ts=end,
        source_class=source_class,
        source_text=_text(row.fields.get(c.source_text)),
        component=component,
        component_kind=kind,
    )


def _paired(
    rows: Iterable[Row], mapping: HistoryMapping, start_ms: int | None
) -> tuple[list[Incident], list[BadRow]]:
    c = mapping.columns
    time_col, event_col = c.time or "", c.event or ""
    starts = {v.casefold() for v in c.start_values}
    ends = {v.casefold() for v in c.end_values}
    events: list[tuple[int, int, bool, Row]] = []
    bad: list[BadRow] = []
    for row in rows:
        try:
            when = parse_time(row.fields.get(time_col), mapping, start_ms)
            if when is None:
                raise RowError(f"no time in column {time_col!r}")
            kind = _text(row.fields.get(event_col)).casefold()
            if kind not in starts | ends:
                raise RowError(f"event {kind!r} is neither a start ({', '.join(c.start_values)}) nor an end")
            _incident(row, mapping, when, None)  # checks host and class now, with this row's number
            events.append((when, row.number, kind in starts, row))
        except RowError as exc:
            bad.append(BadRow(row.number, str(exc)))
    open_starts: dict[tuple[str, str, str], list[tuple[int, Row]]] = {}
    out: list[Incident] = []
    # at one instant an end closes before a start opens, so back-to-back incidents pair correctly
    for when, _number, is_start, row in sorted(events, key=lambda e: (e[0], e[2], e[1])):
        key = (
            _text(row.fields.get(c.host)),
            _text(row.fields.get(c.source_class)).casefold(),
            _text(row.fields.get(c.component)),
        )
        if is_start:
            open_starts.setdefault(key, []).append((when, row))
            continue
        pending = open_starts.get(key)
        if not pending:
            bad.append(BadRow(row.number, "an end with no open start for its host, class and component"))
            continue
        started, start_row = pending.pop(0)
        out.append(_incident(start_row, mapping, started, when))
    for pending in open_starts.values():
        out.extend(_incident(start_row, mapping, started, None) for started, start_row in pending)
    out.sort(key=lambda i: i.row)
    bad.sort(key=lambda b: b.number)
    return out, bad
