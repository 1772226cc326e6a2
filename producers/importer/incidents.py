"""Rows → incidents: times read (absolute, epoch or relative to ``--start``), start/end pairs matched.

Pure: a row that cannot be read becomes a ``BadRow`` with its reason and the rest go on. Event-
shaped traces (one row per start or end) are paired per host, class and component, oldest
open start first, a start before an end at the same time (``schemas.spans``); a start never ended
is an open incident (no ``end_ts``).
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from producers.importer.mapping import UNIT_MS, Columns, HistoryMapping
from producers.importer.sources import BadRow, Row, cell
from schemas import BoundsError
from schemas.bounds import MAX_ID_CHARS, check_id, check_ts, cut_text, ms_from_number
from schemas.spans import Edge, pair_spans


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


# positions of the cells in a Row (HistoryMapping.columns.wanted())
HOST, START, END, CLASS, TEXT, COMPONENT, KIND, TIME, EVENT = range(9)


def parse_time(
    value: Any, mapping: HistoryMapping, start_ms: int | None, now_ms: int | None = None
) -> int | None:
    """Epoch ms of a time cell, within the bounds of every way in; None for an empty one.

    RowError says what is wrong (unparseable, NaN, before 2000-01-01, after now plus a day).
    """
    text = cell(value)
    if not text:
        return None
    now = int(time.time() * 1000) if now_ms is None else now_ms
    try:
        return check_ts(_epoch_ms(text, mapping, start_ms), now, what=f"time {text[:40]!r} =")
    except BoundsError as exc:
        raise RowError(str(exc)) from None


def _epoch_ms(text: str, mapping: HistoryMapping, start_ms: int | None) -> int:
    try:
        number = float(text)
    except ValueError:
        number = None
    if number is not None:
        if mapping.time.epoch is not None:
            return ms_from_number(number, 1000 if mapping.time.epoch == "s" else 1)
        if start_ms is None:
            raise RowError(f"relative time {text[:40]!r} needs --start (or [time] epoch in the mapping)")
        return start_ms + ms_from_number(number, UNIT_MS[mapping.time.relative_unit])
    try:
        when = dt.datetime.fromisoformat(text)
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.UTC)
        return round(when.timestamp() * 1000)
    except (ValueError, OverflowError):
        raise RowError(f"unparseable time {text[:40]!r} (ISO 8601, or a number)") from None


def parse_start(text: str, now_ms: int | None = None) -> int:
    """``--start``: an ISO 8601 date or time (UTC when no zone is given) → epoch ms, within the bounds.

    ValueError (a BoundsError when the date is out of range) when it is not.
    """
    when = dt.datetime.fromisoformat(text)
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    ms = round(when.timestamp() * 1000)
    return check_ts(ms, int(time.time() * 1000) if now_ms is None else now_ms, what="--start")


def to_incidents(
    rows: Iterable[Row], mapping: HistoryMapping, start_ms: int | None, now_ms: int | None = None
) -> tuple[list[Incident], list[BadRow]]:
    """The incidents the rows (cells in ``columns.wanted()`` order) describe, and the rows that describe none."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    if mapping.columns.event_shaped:
        return _paired(rows, mapping, start_ms, now_ms)
    out: list[Incident] = []
    bad: list[BadRow] = []
    c = mapping.columns
    for row in rows:
        try:
            v = row.values
            start = parse_time(v[START], mapping, start_ms, now_ms)
            if start is None:
                raise RowError(f"no start time in column {c.start!r}")
            end = parse_time(v[END], mapping, start_ms, now_ms)
            if end is not None and end < start:
                raise RowError(f"ends before it starts ({c.end} < {c.start})")
            _check(v, c, mapping)
            out.append(_incident(row, mapping, start, end))
        except RowError as exc:
            bad.append(BadRow(row.number, str(exc)))
    return out, bad


def _check(v: tuple[str, ...], c: Columns, mapping: HistoryMapping) -> None:
    if not v[HOST]:
        raise RowError(f"no host in column {c.host!r}")
    try:
        check_id(mapping.inventory.host_prefix + v[HOST])
    except BoundsError as exc:
        raise RowError(str(exc)) from None
    if not v[CLASS]:
        raise RowError(f"no class in column {c.source_class!r}")


def _incident(row: Row, mapping: HistoryMapping, start: int, end: int | None) -> Incident:
    v = row.values
    return Incident(
        row=row.number,
        host_id=mapping.inventory.host_prefix + v[HOST],
        start_ts=start,
        end_ts=end,
        source_class=cut_text(v[CLASS], MAX_ID_CHARS),
        source_text=cut_text(v[TEXT]),
        component=cut_text(v[COMPONENT], MAX_ID_CHARS) or None,
        component_kind=cut_text(v[KIND], MAX_ID_CHARS) or None,
    )


def _paired(
    rows: Iterable[Row], mapping: HistoryMapping, start_ms: int | None, now_ms: int
) -> tuple[list[Incident], list[BadRow]]:
    c = mapping.columns
    starts = {v.casefold() for v in c.start_values}
    ends = {v.casefold() for v in c.end_values}
    events: list[Edge[Row]] = []
    bad: list[BadRow] = []
    for row in rows:
        try:
            v = row.values
            when = parse_time(v[TIME], mapping, start_ms, now_ms)
            if when is None:
                raise RowError(f"no time in column {c.time!r}")
            kind = v[EVENT].casefold()
            if kind not in starts and kind not in ends:
                raise RowError(
                    f"event {kind[:40]!r} is neither a start ({', '.join(c.start_values)}) nor an end"
                )
            _check(v, c, mapping)
            key = (v[HOST], v[CLASS].casefold(), v[COMPONENT])
            events.append(Edge(key, when, kind in starts, row.number, row))
        except RowError as exc:
            bad.append(BadRow(row.number, str(exc)))
    spans, orphans = pair_spans(events)
    out = [_incident(sp.start.item, mapping, sp.start.ts, sp.end.ts if sp.end else None) for sp in spans]
    bad += [BadRow(e.seq, "an end with no open start for its host, class and component") for e in orphans]
    out.sort(key=lambda i: i.row)
    bad.sort(key=lambda b: b.number)
    return out, bad
