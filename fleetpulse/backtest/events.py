"""The lake's history as the detectors saw it: decoded records in event-time order, read through ``analytics.lake``.

Rows are turned back into envelope + payload records (the shape the rules take from Kafka), decoded
column by column, and merged across tables by (event time, event id) sorted on the key columns, so the
same lake always replays in the same order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import polars as pl

from analytics.lake import Lake
from schemas.events import ENVELOPE_FIELDS

ERROR_TABLES = ("xid_raised", "ecc_error_observed", "pcie_aer_reported", "link_event_observed")
SAMPLE_TABLE = "host_sampled"
INVENTORY_TABLE = "host_inventoried"
OUTAGE_TABLES = ("incidents", "operator_events")
FINDING_TABLE = "finding_raised"
ACTION_TABLE = "maintenance_action_recorded"
REPLAYED_TABLES = (*ERROR_TABLES, SAMPLE_TABLE)
DAY_MS = 86_400_000
TS_STATS = (pl.len().alias("n"), pl.col("ts").min().alias("lo"), pl.col("ts").max().alias("hi"))

Record = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Period:
    """Event-time bounds of a backtest, ``[start, end)`` in ms; None leaves a side open."""

    start: int | None = None
    end: int | None = None

    def expr(self) -> pl.Expr:
        cond = pl.lit(True)
        if self.start is not None:
            cond = cond & (pl.col("ts") >= self.start)
        if self.end is not None:
            cond = cond & (pl.col("ts") < self.end)
        return cond


class DayByDay:
    """Tables' records within a period, read one day of event time at a time, in replay order.

    Iterating reads the lake again (each pass is the same stream), so a month of a large fleet is
    never held in memory at once; ``len`` counts without reading the rows.
    """

    def __init__(self, lake: Lake, tables: Sequence[str], period: Period) -> None:
        self.lake, self.tables, self.period = lake, tuple(tables), period
        frames = [lake.scan(t).filter(period.expr()).select(TS_STATS) for t in self.tables]
        stats = pl.concat([f.collect() for f in frames]) if frames else pl.DataFrame()
        self.count = int(stats["n"].sum()) if stats.height else 0
        bounds = stats.select(pl.col("lo").min(), pl.col("hi").max()).row(0) if self.count else (None, None)
        self.first: int | None = bounds[0]
        self.last: int | None = bounds[1]

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[Record]:
        if self.first is None or self.last is None:
            return
        for day in range(self.first // DAY_MS, self.last // DAY_MS + 1):
            lo, hi = day * DAY_MS, (day + 1) * DAY_MS
            start = lo if self.period.start is None else max(lo, self.period.start)
            end = hi if self.period.end is None else min(hi, self.period.end)
            yield from read_tables(self.lake, self.tables, Period(start, end))


@dataclass(frozen=True, slots=True)
class History:
    """Everything a backtest reads from a lake: the replayed stream and the context around it."""

    events: DayByDay | Sequence[Record]  # errors and samples in [start, end), in replay order
    inventory: list[Record]  # every HostInventoried, in order (last one per host wins)
    outages: list[Record]  # incidents and operators' steps before ``end``, in order
    live_findings: list[Record]  # what the live detectors raised in [start, end)
    live_actions: list[Record]  # what the live planner recorded in [start, end)


def in_order(records: Iterable[Record]) -> list[Record]:
    """Event-time order, ties broken by event id (an id is unique, so the order is total)."""
    return sorted(records, key=lambda r: (r["ts"], r["event_id"]))


def nested(frame: pl.DataFrame) -> list[Record]:
    """A frame of flat lake rows as ``unflatten`` makes them, decoded column by column: Arrow turns each
    column (samples' nested gpus and nics too) into Python values in one pass, then rows are zipped."""
    body = [c for c in frame.columns if c not in ENVELOPE_FIELDS and c != "date"]
    envelopes = zip(*(_values(frame, c) for c in ENVELOPE_FIELDS), strict=True)
    payloads = zip(*(_values(frame, c) for c in body), strict=True) if body else repeat(())
    out = []
    for envelope, payload in zip(envelopes, payloads, strict=False):  # no body: payloads repeats ()
        record: Record = dict(zip(ENVELOPE_FIELDS, envelope, strict=True))
        record["payload"] = dict(zip(body, payload, strict=True))
        out.append(record)
    return out


def _values(frame: pl.DataFrame, column: str) -> list[Any]:
    # Arrow's conversion is about twice as fast as Polars' on nested columns (samples' gpus, nics).
    values: list[Any] = frame[column].to_arrow().to_pylist()
    return values


def read_table(lake: Lake, table: str, period: Period) -> list[Record]:
    """One table's records within ``period`` (the reader gives an empty frame for a missing table)."""
    return nested(lake.scan(table).filter(period.expr()).drop("date", strict=False).collect())


def read_tables(lake: Lake, tables: Sequence[str], period: Period) -> list[Record]:
    """The tables' records within ``period`` in ``in_order``'s order, sorted on the key columns."""
    frames = [lake.scan(t).filter(period.expr()).drop("date", strict=False).collect() for t in tables]
    frames = [f for f in frames if f.height]
    if not frames:
        return []
    keys = pl.concat(
        [
            f.select(
                pl.col("ts").cast(pl.Int64),
                pl.col("event_id").cast(pl.String),
                pl.lit(n, pl.UInt32).alias("table"),
                pl.int_range(pl.len(), dtype=pl.UInt32).alias("row"),
            )
            for n, f in enumerate(frames)
        ]
    ).sort("ts", "event_id")
    records = [nested(f) for f in frames]
    return [records[t][i] for t, i in zip(keys["table"].to_list(), keys["row"].to_list(), strict=True)]


def read_history(lake: Lake, period: Period = Period()) -> History:
    """The replayed errors and samples, and what frames them: inventory, outages, live output."""
    before_end = Period(None, period.end)
    return History(
        events=DayByDay(lake, REPLAYED_TABLES, period),
        inventory=read_tables(lake, (INVENTORY_TABLE,), Period()),
        outages=read_tables(lake, OUTAGE_TABLES, before_end),
        live_findings=read_tables(lake, (FINDING_TABLE,), period),
        live_actions=read_tables(lake, (ACTION_TABLE,), period),
    )
