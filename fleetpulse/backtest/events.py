"""The lake's history as the detectors saw it: decoded records in event-time order, read through ``analytics.lake``.

Rows are turned back into envelope + payload records (the shape the rules take from Kafka) and
merged across tables by (event time, event id), so the same lake always replays in the same order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True, slots=True)
class History:
    """Everything a backtest reads from a lake: the replayed stream and the context around it."""

    events: list[Record]  # errors and samples in [start, end), in replay order
    inventory: list[Record]  # every HostInventoried, in order (last one per host wins)
    outages: list[Record]  # incidents and operators' steps before ``end``, in order
    live_findings: list[Record]  # what the live detectors raised in [start, end)
    live_actions: list[Record]  # what the live planner recorded in [start, end)


def unflatten(row: Mapping[str, Any]) -> Record:
    """A flat lake row (``schemas.arrow.flatten``) back into an envelope with a ``payload``."""
    record = {k: row[k] for k in ENVELOPE_FIELDS}
    record["payload"] = {k: v for k, v in row.items() if k not in record and k != "date"}
    return record


def in_order(records: Iterable[Record]) -> list[Record]:
    """Event-time order, ties broken by event id (an id is unique, so the order is total)."""
    return sorted(records, key=lambda r: (r["ts"], r["event_id"]))


def read_table(lake: Lake, table: str, period: Period) -> list[Record]:
    """One table's records within ``period`` (the reader gives an empty frame for a missing table)."""
    frame = lake.scan(table).filter(period.expr()).drop("date").collect()
    # Arrow's row conversion is about twice as fast as Polars' on nested columns (samples' gpus, nics).
    return [unflatten(row) for row in frame.to_arrow().to_pylist()]


def read_tables(lake: Lake, tables: Sequence[str], period: Period) -> list[Record]:
    return in_order(r for table in tables for r in read_table(lake, table, period))


def read_history(lake: Lake, period: Period = Period()) -> History:
    """The replayed errors and samples, and what frames them: inventory, outages, live output."""
    before_end = Period(None, period.end)
    return History(
        events=read_tables(lake, REPLAYED_TABLES, period),
        inventory=read_tables(lake, (INVENTORY_TABLE,), Period()),
        outages=read_tables(lake, OUTAGE_TABLES, before_end),
        live_findings=read_tables(lake, (FINDING_TABLE,), period),
        live_actions=read_tables(lake, (ACTION_TABLE,), period),
    )
