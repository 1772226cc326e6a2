"""The lake's samples as column batches for the detection core: no record is made of a valid sample row.

A day's HostSampled rows are put in replay order and turned into one ``SampleColumns`` (each column in
one pass, Arrow and Polars doing the work); the replay hands the core runs of consecutive rows between
the errors (``SampleRun``). A row is in a run only when it passes validation by the validator's own
tests: the envelope's (``envelope_id_ok`` on each distinct id), the payload's ranges (``sample_bounds``,
the table the per-record check reads). Any other row is made a record and goes the per-record way
(``DetectionCore.step``), where the validator names its reason, as it did before.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from analytics.jobs.slow_view import degraded_expr
from analytics.jobs.source import step_time
from fleetpulse.backtest.frames import nested
from schemas import HostSampled
from streams.core.policy import ValidationLimits
from streams.core.samples.columns import SampleColumns
from streams.core.validate import Bound, envelope_id_ok, sample_bounds


@dataclass(frozen=True, slots=True)
class SampleRun:
    """Rows ``lo:hi`` of a day's samples, all valid, read one after the other."""

    cols: SampleColumns
    lo: int
    hi: int


def sample_columns(frame: pl.DataFrame) -> SampleColumns:
    """What the host windows read of each row (``SampleColumns.of_records`` of the rows' records)."""
    return _as_columns(frame.select(_columns(frame.columns)))


def _columns(names: list[str]) -> list[pl.Expr]:
    return [
        pl.col("ts").cast(pl.Int64),
        pl.col("host_id").cast(pl.String),
        pl.col("cluster").cast(pl.String),
        pl.col("interval_s").cast(pl.Int64),
        (pl.col("job_id") if "job_id" in names else pl.lit(None)).cast(pl.String).alias("job_id"),
        step_time().cast(pl.Float64),
        pl.col("bus_bw_gbps").cast(pl.Float64),
        degraded_expr(names),
    ]


def _as_columns(out: pl.DataFrame) -> SampleColumns:
    ts, host, cluster, interval, job, step, bw, degraded = (out[c].to_list() for c in out.columns)
    return SampleColumns(ts, host, cluster, interval, job, step, bw, degraded)


def _within(expr: pl.Expr, bound: Bound) -> pl.Expr:
    _, low, high = bound
    # as the per-record check compares: in float64 (a float32 column would compare with the bound rounded
    # to float32); NaN sorts above every number in Polars, so it is never within
    return expr.cast(pl.Float64).is_between(low, high).fill_null(False)


def fits_expr(frame: pl.DataFrame, limits: ValidationLimits) -> pl.Expr:
    """True for a row the validator passes: its envelope's checks and ``sample_bounds``; False sends the
    row through the per-record check, which names the reason (or passes it after all)."""
    bounds = sample_bounds(limits)
    ids = pl.concat([frame["host_id"], frame["cluster"]]).drop_nulls().unique().to_list()
    good = [v for v in ids if isinstance(v, str) and v and envelope_id_ok(v)]
    test = (
        (pl.col("event_type") == HostSampled.EVENT_TYPE).fill_null(False)
        & (pl.col("ts") >= limits.min_ts_ms).fill_null(False)
        & pl.col("host_id").is_in(good).fill_null(False)
        & pl.col("cluster").is_in(good).fill_null(False)
        & (pl.col("agent_seq") >= 0).fill_null(False)
    )
    for bound in bounds.top:
        within = _within(pl.col(bound[0]), bound)
        test = test & (within | pl.col(bound[0]).is_null() if bound[0] in bounds.nullable else within)
    for column, table in (("gpus", bounds.gpus), ("nics", bounds.nics)):
        item = pl.lit(True)
        for bound in table:
            item = item & _within(pl.element().struct.field(bound[0]), bound)
        test = test & pl.col(column).list.eval(item).list.all().fill_null(False)
    return test.alias("fits")


NEEDED = frozenset({"agent_seq", "interval_s", "step_time_ms", "bus_bw_gbps", "gpus", "nics"})


def sample_items(
    frame: pl.DataFrame, limits: ValidationLimits, order: list[int] | None = None
) -> tuple[SampleColumns, list[bool]]:
    """A day's samples as columns, and which rows may be folded without a record; rows in ``order`` (replay
    order; default: as they are). Only the flat columns computed are put in order, not the nested rows.

    A table lacking a column the validator reads has no row that fits: each goes the per-record way.
    """
    height = frame.height if order is None else len(order)
    if not set(frame.columns) >= NEEDED:
        return SampleColumns([], [], [], [], [], [], [], []), [False] * height
    out = frame.select(fits_expr(frame, limits), *_columns(frame.columns))
    if order is not None:
        out = out[order]
    return _as_columns(out.drop("fits")), out["fits"].to_list()


def one_record(frame: pl.DataFrame, row: int) -> dict[str, object]:
    """Row ``row`` as the per-record path takes it."""
    return nested(frame.slice(row, 1))[0]
