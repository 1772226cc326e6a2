"""Time to repair per cause, measured from real start/end pairs, never from a policy's constants.

Three sources of outages, one row each (host_id, cause, source, start_ts, end_ts, hours):
incidents with an end; operator ``out_of_service`` → ``returned_to_service``; the planner's own
episodes, first action → ``returned``. Outages still open are counted (coverage), not measured.
"""

from __future__ import annotations

from typing import Literal

import polars as pl

from analytics.jobs.coverage import UNCLASSIFIED, Coverage
from analytics.jobs.faults import KIND_CAUSE
from analytics.jobs.incidents import normalised_cause
from analytics.jobs.source import MS_PER_HOUR

Source = Literal["incident", "operator", "planner"]
SOURCES: tuple[Source, ...] = ("incident", "operator", "planner")
# Causes whose outage is no hardware repair (a restart clears them): not a domain's repair time.
NO_REPAIR_CAUSES = ("software", "nccl_watchdog")
# The planner's actions that take a host out (a suspicion alone takes nothing out).
PLANNER_STARTS = ("drain_requested", "drained")

INTERVAL_SCHEMA = {
    "host_id": pl.String,
    "cause": pl.String,
    "source": pl.String,
    "start_ts": pl.Int64,
    "end_ts": pl.Int64,
}


def _finish(frame: pl.LazyFrame, source: Source) -> pl.LazyFrame:
    return (
        frame.with_columns(pl.lit(source).alias("source"))
        .select(*INTERVAL_SCHEMA)
        .cast(INTERVAL_SCHEMA)  # type: ignore[arg-type]
        .with_columns(((pl.col("end_ts") - pl.col("start_ts")) / MS_PER_HOUR).alias("hours"))
    )


def incident_intervals(incidents: pl.LazyFrame) -> pl.LazyFrame:
    """One outage per incident; ``end_ts`` null while it is open (or when the source gave no end)."""
    end = pl.when(pl.col("end_ts") >= pl.col("start_ts")).then(pl.col("end_ts"))
    return _finish(
        incidents.select("host_id", normalised_cause(pl.col("cause")).alias("cause"), "start_ts", end.alias("end_ts")),
        "incident",
    )  # fmt: skip


def _episodes(events: pl.LazyFrame, ends: pl.Expr, starts: pl.Expr, cause: pl.Expr) -> pl.LazyFrame:
    """Per host, events grouped into episodes that close at each ``ends`` event (open ones kept)."""
    ended = ends.cast(pl.Int32)
    episode = (ended.cum_sum().over("host_id") - ended).alias("_episode")
    return (
        events.sort("host_id", "ts")
        .with_columns(episode)
        .group_by("host_id", "_episode")
        .agg(
            pl.col("ts").filter(starts).min().alias("start_ts"),
            pl.col("ts").filter(ends).max().alias("end_ts"),
            cause.drop_nulls().first().alias("cause"),
        )
        .filter(pl.col("start_ts").is_not_null())
        .with_columns(pl.col("cause").fill_null(UNCLASSIFIED))
    )


def operator_intervals(events: pl.LazyFrame) -> pl.LazyFrame:
    """``out_of_service`` → ``returned_to_service`` per host; the cause is the first one the episode names."""
    kinds = events.filter(pl.col("kind").is_in(["out_of_service", "returned_to_service"]))
    named = normalised_cause(pl.col("cause"))
    cause = pl.when(named != UNCLASSIFIED).then(named)
    return _finish(
        _episodes(kinds, pl.col("kind") == "returned_to_service", pl.col("kind") == "out_of_service", cause),
        "operator",
    )


def rule_cause(rule: pl.Expr) -> pl.Expr:
    """The Table 5 cause of a repeat-offender rule, from the fault class its name starts with."""
    expr: pl.Expr = pl.lit(None, pl.String)
    for kind in sorted(KIND_CAUSE, key=len):  # longest prefix last, so it wins
        expr = pl.when(rule.str.starts_with(kind)).then(pl.lit(KIND_CAUSE[kind])).otherwise(expr)
    return expr


def planner_intervals(actions: pl.LazyFrame) -> pl.LazyFrame:
    """The planner's episodes: a host's first drain → its ``returned``; the cause from the rule that fired."""
    starts = pl.col("kind").is_in(PLANNER_STARTS)
    return _finish(
        _episodes(actions, pl.col("kind") == "returned", starts, rule_cause(pl.col("rule"))), "planner"
    )


def all_intervals(
    incidents: pl.LazyFrame | None, operator: pl.LazyFrame | None, actions: pl.LazyFrame | None
) -> pl.LazyFrame:
    """Every outage of the three sources (any may be None), open ones included."""
    parts = []
    if incidents is not None:
        parts.append(incident_intervals(incidents))
    if operator is not None:
        parts.append(operator_intervals(operator))
    if actions is not None:
        parts.append(planner_intervals(actions))
    if not parts:
        return pl.LazyFrame(schema={**INTERVAL_SCHEMA, "hours": pl.Float64})
    return pl.concat(parts)


def repair_times(intervals: pl.LazyFrame) -> pl.LazyFrame:
    """Per cause and source: outages, closed ones, median / p90 / mean hours of the closed ones."""
    closed = pl.col("end_ts").is_not_null()
    hours = pl.col("hours").filter(closed)
    return (
        intervals.group_by("cause", "source")
        .agg(
            pl.len().alias("outages"),
            closed.sum().cast(pl.Int64).alias("closed"),
            hours.median().alias("ttr_median_h"),
            hours.quantile(0.9, "linear").alias("ttr_p90_h"),
            hours.mean().alias("ttr_mean_h"),
        )
        .sort(["closed", "cause", "source"], descending=[True, False, False])
    )


def interval_coverage(intervals: pl.DataFrame) -> Coverage:
    """Outages with an end (measured) of all outages."""
    return Coverage(intervals.filter(pl.col("end_ts").is_not_null()).height, intervals.height, "outages",
                    "closed (start and end known)")  # fmt: skip


def repair_hours(intervals: pl.DataFrame) -> tuple[float | None, int]:
    """(median hours, n) over closed outages that needed a repair; (None, 0) when none was measured."""
    closed = intervals.filter(pl.col("end_ts").is_not_null() & ~pl.col("cause").is_in(NO_REPAIR_CAUSES))
    if not closed.height:
        return None, 0
    return float(closed["hours"].median()), closed.height  # type: ignore[arg-type]
