"""Time to repair per cause, measured from real start/end pairs, never from a policy's constants.

Three sources of outages, one row each (host_id, cause, source, how, start_ts, end_ts, hours):
incidents with an end; operator ``out_of_service`` → ``returned_to_service``; the planner's own
episodes, first action → ``returned``. Outages still open are counted (coverage), not measured.
Per operation kind, a time out shorter than the reset bound was a reset (a reboot cleared it), not
a repair: the same split the planner draws its repair times from (``streams.core.fleet.outages.measured_for``).
"""

from __future__ import annotations

from typing import Literal

import polars as pl

from analytics.jobs.coverage import Coverage
from analytics.jobs.incidents import normalised_cause
from analytics.jobs.source import MS_PER_HOUR
from ground.packaged_policy import packaged, parse_duration_ms
from schemas.spans import Edge, pair_spans, step_closes, step_key
from schemas.taxonomy import CLOSING_KINDS, KIND_CAUSE, OPENING_KINDS, RETURNED, STEP_GROUP, UNCLASSIFIED

Source = Literal["incident", "operator", "planner"]
SOURCES: tuple[Source, ...] = ("incident", "operator", "planner")
# What an outage stands for when a duration is needed: a reset (short), an RMA, or any other repair.
OperationKind = Literal["reset", "repair", "rma"]
OPERATION_KINDS: tuple[OperationKind, ...] = ("reset", "repair", "rma")
# Causes whose outage is no hardware repair (a restart clears them): not a domain's repair time.
NO_REPAIR_CAUSES = ("software", "nccl_watchdog")
# The planner's actions that take a host out (a suspicion alone takes nothing out).
PLANNER_STARTS = ("drain_requested", "drained")
# ``[planner] reset_within`` of the packaged policy file, in hours: the jobs' reset bound unless told another
PACKAGED_RESET_WITHIN_H: float = parse_duration_ms(packaged("planner", "reset_within")) / MS_PER_HOUR

INTERVAL_SCHEMA = {
    "host_id": pl.String,
    "cause": pl.String,
    "source": pl.String,
    "how": pl.String,  # incident; an operator's service, repair or rma spell; the planner's operation
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


def incident_intervals(incidents: pl.LazyFrame, operator: pl.LazyFrame | None = None) -> pl.LazyFrame:
    """One outage per incident; ``end_ts`` null while it is open (or when the source gave no end).

    An operator's ``returned_to_service`` while the incident is open ends it there: the host was
    back, whatever end the source recorded later (or never).
    """
    end = pl.when(pl.col("end_ts") >= pl.col("start_ts")).then(pl.col("end_ts"))
    frame = incidents.select(
        "event_id",
        "host_id",
        normalised_cause(pl.col("cause")).alias("cause"),
        "start_ts",
        end.alias("end_ts"),
        pl.lit("incident").alias("how"),
    )
    if operator is not None:
        back = operator.filter(pl.col("kind") == RETURNED).select("host_id", pl.col("ts").alias("_back"))
        open_then = (pl.col("_back") >= pl.col("start_ts")) & (
            pl.col("end_ts").is_null() | (pl.col("_back") < pl.col("end_ts"))
        )
        first_back = (
            frame.join(back, on="host_id").filter(open_then).group_by("event_id").agg(pl.col("_back").min())
        )
        frame = frame.join(first_back, on="event_id", how="left").with_columns(
            pl.coalesce("_back", "end_ts").alias("end_ts")
        )
    return _finish(frame, "incident")


def _episodes(
    events: pl.LazyFrame, ends: pl.Expr, starts: pl.Expr, cause: pl.Expr, how: pl.Expr
) -> pl.LazyFrame:
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
            how.drop_nulls().first().alias("how"),
        )
        .filter(pl.col("start_ts").is_not_null())
        .with_columns(pl.col("cause").fill_null(UNCLASSIFIED))
    )


def operator_intervals(events: pl.LazyFrame) -> pl.LazyFrame:
    """Operators' spells: an opening step (out of service, repair started, RMA shipped) until the closing
    step of its kind and ticket (or of its kind without a ticket), or ``returned_to_service``, which
    closes every spell open on the host; paired as every reader pairs them (``schemas.spans``). A step
    repeated while its spell is open changes nothing; the cause is the one the opening step names, else
    the closing one's, else ``unclassified``."""
    steps = events.select("host_id", "ts", "kind", "cause", "ticket_id").collect()
    by_host: dict[str, list[Edge[tuple[str, str | None]]]] = {}
    for seq, (host, ts, kind, cause, ticket) in enumerate(steps.iter_rows()):
        if kind in OPENING_KINDS or kind in CLOSING_KINDS:
            opens = kind in OPENING_KINDS
            edge = Edge(step_key(kind, ticket), ts, opens, seq, (kind, cause), closes_all=kind == RETURNED)
            by_host.setdefault(host, []).append(edge)
    rows: list[tuple[str, str | None, str, int, int | None]] = []
    for host, edges in by_host.items():
        spans, _ = pair_spans(
            edges, matches=lambda s, e: step_closes(str(s.key), e.item[0], str(e.key)), merge_repeats=True
        )
        for sp in spans:
            cause = sp.start.item[1] if sp.start.item[1] is not None else (sp.end.item[1] if sp.end else None)
            rows.append(
                (host, cause, STEP_GROUP[sp.start.item[0]], sp.start.ts, sp.end.ts if sp.end else None)
            )
    schema = {
        "host_id": pl.String,
        "cause": pl.String,
        "how": pl.String,
        "start_ts": pl.Int64,
        "end_ts": pl.Int64,
    }
    spells = pl.LazyFrame(rows, schema=schema, orient="row").with_columns(
        normalised_cause(pl.col("cause")).alias("cause")
    )
    return _finish(spells, "operator")


def rule_cause(rule: pl.Expr) -> pl.Expr:
    """The Table 5 cause of a repeat-offender rule, from the fault class its name starts with."""
    expr: pl.Expr = pl.lit(None, pl.String)
    for kind in sorted(KIND_CAUSE, key=len):  # longest prefix last, so it wins
        expr = pl.when(rule.str.starts_with(kind)).then(pl.lit(KIND_CAUSE[kind])).otherwise(expr)
    return expr


def planner_intervals(actions: pl.LazyFrame) -> pl.LazyFrame:
    """The planner's episodes: a host's first drain → its ``returned``; the cause from the rule that fired."""
    starts = pl.col("kind").is_in(PLANNER_STARTS)
    operation = pl.lit(None, pl.String)  # a table from before the operation column: a repair
    if "operation" in actions.collect_schema().names():
        operation = pl.col("operation").filter(pl.col("operation") != "drain")
    episodes = _episodes(actions, pl.col("kind") == "returned", starts, rule_cause(pl.col("rule")), operation)
    return _finish(episodes, "planner")


def all_intervals(
    incidents: pl.LazyFrame | None, operator: pl.LazyFrame | None, actions: pl.LazyFrame | None
) -> pl.LazyFrame:
    """Every outage of the three sources (any may be None), open ones included."""
    parts = []
    if incidents is not None:
        parts.append(incident_intervals(incidents, operator))
    if operator is not None:
        parts.append(operator_intervals(operator))
    if actions is not None:
        parts.append(planner_intervals(actions))
    if not parts:
        return pl.LazyFrame(schema={**INTERVAL_SCHEMA, "hours": pl.Float64})
    return pl.concat(parts)


def _ttr(intervals: pl.LazyFrame, *by: str) -> pl.LazyFrame:
    """Per ``by``: outages, closed ones, median / p90 / mean hours of the closed ones."""
    closed = pl.col("end_ts").is_not_null()
    hours = pl.col("hours").filter(closed)
    return intervals.group_by(*by).agg(
        pl.len().alias("outages"),
        closed.sum().cast(pl.Int64).alias("closed"),
        hours.median().alias("ttr_median_h"),
        hours.quantile(0.9, "linear").alias("ttr_p90_h"),
        hours.mean().alias("ttr_mean_h"),
    )


def repair_times(intervals: pl.LazyFrame) -> pl.LazyFrame:
    """Per cause and source: outages, closed ones, median / p90 / mean hours of the closed ones."""
    return _ttr(intervals, "cause", "source").sort(
        ["closed", "cause", "source"], descending=[True, False, False]
    )


def operation_kind(reset_within_h: float) -> pl.Expr:
    """The operation kind an outage stands for: a reset when it closed within ``reset_within_h``,
    else an RMA (an operator's RMA spell, the planner's RMA), else a repair."""
    return (
        # in ms: the hours column is a float a hair under a whole hour (1 h would read as a reset)
        pl.when((pl.col("end_ts") - pl.col("start_ts")) < round(reset_within_h * MS_PER_HOUR))
        .then(pl.lit("reset"))
        .when(pl.col("how") == "rma")
        .then(pl.lit("rma"))
        .otherwise(pl.lit("repair"))
        .alias("operation")
    )


def repair_times_by_operation(intervals: pl.LazyFrame, reset_within_h: float) -> pl.LazyFrame:
    """Per cause and operation kind (reset, repair, rma): outages, closed ones, median / p90 / mean
    hours of the closed ones; a reset is never a repair's time."""
    return _ttr(intervals.with_columns(operation_kind(reset_within_h)), "cause", "operation").sort(
        ["cause", "operation"]
    )


def interval_coverage(intervals: pl.DataFrame) -> Coverage:
    """Outages with an end (measured) of all outages."""
    return Coverage(
        intervals.filter(pl.col("end_ts").is_not_null()).height,
        intervals.height,
        "outages",
        "closed (start and end known)",
    )


def repair_hours(intervals: pl.DataFrame, reset_within_h: float) -> tuple[float | None, int]:
    """(median hours, n) over closed outages that needed a repair (neither a no-repair cause nor a
    reset, shorter than ``reset_within_h``); (None, 0) when none was measured."""
    closed = intervals.with_columns(operation_kind(reset_within_h)).filter(
        pl.col("end_ts").is_not_null()
        & ~pl.col("cause").is_in(NO_REPAIR_CAUSES)
        & (pl.col("operation") != "reset")
    )
    if not closed.height:
        return None, 0
    return float(closed["hours"].median()), closed.height  # type: ignore[arg-type]
