"""The lake's history as the detectors saw it: decoded records in event-time order, read through ``analytics.lake``.

Rows are turned back into envelope + payload records (the shape the rules take from Kafka), decoded
column by column, and merged across tables by (event time, event id) sorted on the key columns, so the
same lake always replays in the same order.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import polars as pl

from analytics.lake import Lake
from fleetpulse.backtest.frames import Record, nested, ordered
from fleetpulse.backtest.sample_runs import SampleRun, one_record, sample_items
from ground.delta import DATE
from schemas import HostSampled
from streams.core.policy import ValidationLimits

ERROR_TABLES = ("xid_raised", "ecc_error_observed", "pcie_aer_reported", "link_event_observed")
SAMPLE_TABLE = "host_sampled"
INVENTORY_TABLE = "host_inventoried"
OUTAGE_TABLES = ("incidents", "operator_events")
FINDING_TABLE = "finding_raised"
ACTION_TABLE = "maintenance_action_recorded"
REPLAYED_TABLES = (*ERROR_TABLES, SAMPLE_TABLE)
DAY_MS = 86_400_000
EPOCH = dt.date(1970, 1, 1)
TS_STATS = (pl.len().alias("n"), pl.col("ts").min().alias("lo"), pl.col("ts").max().alias("hi"))

Item = Record | SampleRun  # what a replay reads next: a record, or a run of valid samples as columns


@dataclass(frozen=True, slots=True)
class Period:
    """Event-time bounds of a backtest, ``[start, end)`` in ms; None leaves a side open."""

    start: int | None = None
    end: int | None = None

    def expr(self) -> pl.Expr:
        """The bounds on ``ts``, and on the ``date`` partition it implies (the UTC day of ``ts``, see
        ``ground.delta.with_date``), so a scan reads only the partitions that hold the period."""
        cond = pl.lit(True)
        if self.start is not None:
            cond = cond & (pl.col("ts") >= self.start) & (pl.col(DATE) >= _day(self.start))
        if self.end is not None:
            cond = cond & (pl.col("ts") < self.end) & (pl.col(DATE) <= _day(self.end - 1))
        return cond


def _day(ts: int) -> pl.Expr:
    return pl.lit(EPOCH + dt.timedelta(days=ts // DAY_MS), pl.Date)


class DayByDay:
    """Tables' records within a period, read one day of event time at a time, in replay order.

    Iterating reads the lake again (each pass is the same stream), so a month of a large fleet is
    never held in memory at once; ``len`` counts without reading the rows.
    """

    def __init__(self, lake: Lake, tables: Sequence[str], period: Period) -> None:
        self.lake, self.tables, self.period = lake, tuple(tables), period
        self.scans = [lake.scan(t) for t in self.tables]  # planned once, filtered by each day
        frames = [scan.filter(period.expr()).select(TS_STATS) for scan in self.scans]
        stats = pl.concat([f.collect() for f in frames]) if frames else pl.DataFrame()
        self.count = int(stats["n"].sum()) if stats.height else 0
        bounds = stats.select(pl.col("lo").min(), pl.col("hi").max()).row(0) if self.count else (None, None)
        self.first: int | None = bounds[0]
        self.last: int | None = bounds[1]

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[Record]:
        for day in self._days():
            yield from _in_order(self.scans, day)

    def items(self, limits: ValidationLimits) -> Iterator[Item]:
        """The same stream with runs of valid samples as column batches (``read_items``)."""
        for day in self._days():
            yield from read_items(self.scans, day, limits)

    def _days(self) -> Iterator[Period]:
        if self.first is None or self.last is None:
            return
        for day in range(self.first // DAY_MS, self.last // DAY_MS + 1):
            lo, hi = day * DAY_MS, (day + 1) * DAY_MS
            start = lo if self.period.start is None else max(lo, self.period.start)
            end = hi if self.period.end is None else min(hi, self.period.end)
            yield Period(start, end)


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


def read_table(lake: Lake, table: str, period: Period) -> list[Record]:
    """One table's records within ``period`` (the reader gives an empty frame for a missing table)."""
    return nested(lake.scan(table).filter(period.expr()).drop("date", strict=False).collect())


def read_tables(lake: Lake, tables: Sequence[str], period: Period) -> list[Record]:
    """The tables' records within ``period`` in ``in_order``'s order, sorted on the key columns."""
    return _in_order([lake.scan(t) for t in tables], period)


def _in_order(scans: Sequence[pl.LazyFrame], period: Period) -> list[Record]:
    frames, table, row = ordered(scans, period.expr())
    records = [nested(f) for f in frames]
    return [records[t][i] for t, i in zip(table, row, strict=True)]


def read_items(scans: Sequence[pl.LazyFrame], period: Period, limits: ValidationLimits) -> list[Item]:
    """``read_tables`` of the tables ``scans`` read (``Lake.scan``), but runs of valid samples come as column
    batches (``SampleRun``), not records."""
    frames, table, row = ordered(scans, period.expr())
    sample = next((n for n, f in enumerate(frames) if f["event_type"][0] == HostSampled.EVENT_TYPE), None)
    records = [nested(f) if n != sample else [] for n, f in enumerate(frames)]
    if sample is None:
        return [records[t][i] for t, i in zip(table, row, strict=True)]
    samples = frames[sample]
    order = [i for t, i in zip(table, row, strict=True) if t == sample]  # replay order
    cols, fits = sample_items(samples, limits, order)
    items: list[Item] = []
    k = 0  # the next sample row
    lo = 0  # where the current run of valid rows began
    for t, i in zip(table, row, strict=True):
        if t == sample and fits[k]:
            k += 1
            continue
        if lo < k:
            items.append(SampleRun(cols, lo, k))
        if t == sample:
            items.append(one_record(samples, order[k]))
            k += 1
        else:
            items.append(records[t][i])
        lo = k
    if lo < k:
        items.append(SampleRun(cols, lo, k))
    return items


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
