"""Rows → incidents: times read (absolute, epoch or relative to ``--start``), start/end pairs matched.

Pure: a row that cannot be read becomes a ``BadRow`` with its reason and the rest go on. Event-
shaped traces (one row per start or end) are paired per host, class and component, oldest
open start first, a start before an end at the same time (``schemas.spans``); a start never ended
is an open incident (no ``end_ts``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from producers.importer.mapping import UNIT_MS, Columns, HistoryMapping
from producers.importer.sources import BadRow, Row, cell
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


def parse_time(value: Any, mapping: HistoryMapping, start_ms: int | None) -> int | None:
    """Epoch ms of a time cell; None for an empty one. RowError says what is wrong."""
    text = cell(value)
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
    """The incidents the rows (cells in ``columns.wanted()`` order) describe, and the rows that describe none."""
    if mapping.columns.event_shaped:
        return _paired(rows, mapping, start_ms)
    out: list[Incident] = []
    bad: list[BadRow] = []
    c = mapping.columns
    for row in rows:
        try:
            v = row.values
            start = parse_time(v[START], mapping, start_ms)
            if start is None:
                raise RowError(f"no start time in column {c.start!r}")
            end = parse_time(v[END], mapping, start_ms)
            if end is not None and end < start:
                raise RowError(f"ends before it starts ({c.end} < {c.start})")
            _check(v, c)
            out.append(_incident(row, mapping, start, end))
        except RowError as exc:
            bad.append(BadRow(row.number, str(exc)))
    return out, bad


def _check(v: tuple[str, ...], c: Columns) -> None:
    if not v[HOST]:
        raise RowError(f"no host in column {c.host!r}")
    if not v[CLASS]:
        raise RowError(f"no class in column {c.source_class!r}")


def _incident(row: Row, mapping: HistoryMapping, start: int, end: int | None) -> Incident:
    v = row.values
    return Incident(
        row=row.number,
        host_id=mapping.inventory.host_prefix + v[HOST],
        start_ts=start,
        end_ts=end,
        source_class=v[CLASS],
        source_text=v[TEXT],
        component=v[COMPONENT] or None,
        component_kind=v[KIND] or None,
    )


def _paired(
    rows: Iterable[Row], mapping: HistoryMapping, start_ms: int | None
) -> tuple[list[Incident], list[BadRow]]:
    c = mapping.columns
    starts = {v.casefold() for v in c.start_values}
    ends = {v.casefold() for v in c.end_values}
    events: list[Edge[Row]] = []
    bad: list[BadRow] = []
    for row in rows:
        try:
            v = row.values
            when = parse_time(v[TIME], mapping, start_ms)
            if when is None:
                raise RowError(f"no time in column {c.time!r}")
            kind = v[EVENT].casefold()
            if kind not in starts and kind not in ends:
                raise RowError(f"event {kind!r} is neither a start ({', '.join(c.start_values)}) nor an end")
            _check(v, c)
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
