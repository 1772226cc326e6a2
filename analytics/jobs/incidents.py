"""Recorded incidents (``IncidentReported``: imported history, ticket systems) as the jobs see them.

A cause table over every incident, ``unclassified`` as a row of it and shares over all incidents
(never over the classified part only), and what the source called the incidents no mapping covered.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from analytics.jobs.coverage import is_classified
from analytics.jobs.source import scan_events
from schemas.taxonomy import UNCLASSIFIED

INCIDENTS_TABLE = "incidents"
OPERATOR_EVENTS_TABLE = "operator_events"


def load_incidents(lake: str | Path) -> pl.LazyFrame | None:
    """The lake's incidents, one row per event id; None when the lake has none."""
    return scan_events(lake, INCIDENTS_TABLE)


def load_operator_events(lake: str | Path) -> pl.LazyFrame | None:
    """The lake's operator events, one row per event id; None when the lake has none."""
    return scan_events(lake, OPERATOR_EVENTS_TABLE)


def normalised_cause(cause: pl.Expr) -> pl.Expr:
    """The cause, with a missing or empty one counted as ``unclassified``."""
    return pl.when(is_classified(cause)).then(cause).otherwise(pl.lit(UNCLASSIFIED))


def cause_table(incidents: pl.LazyFrame) -> pl.LazyFrame:
    """cause, count, pct of all incidents, with an ``unclassified`` row even when it is 0, largest first."""
    counts = incidents.group_by(normalised_cause(pl.col("cause")).alias("cause")).agg(
        pl.len().cast(pl.Int64).alias("count")
    )
    always = pl.LazyFrame({"cause": [UNCLASSIFIED]})
    return (
        counts.join(always, on="cause", how="full", coalesce=True)
        .with_columns(pl.col("count").fill_null(0))
        .with_columns((pl.col("count") / pl.col("count").sum() * 100).fill_nan(0.0).alias("pct"))
        .sort(["count", "cause"], descending=[True, False])
    )


def unclassified_classes(incidents: pl.LazyFrame, examples: int = 1) -> pl.LazyFrame:
    """The source's own classes of the unclassified incidents: count and an example text, largest first."""
    return (
        incidents.filter(~is_classified(pl.col("cause")))
        .group_by("source_class")
        .agg(
            pl.len().cast(pl.Int64).alias("count"),
            pl.col("source_text")
            .drop_nulls()
            .unique(maintain_order=True)
            .head(examples)
            .str.join(" | ")
            .alias("example_text"),
        )
        .sort(["count", "source_class"], descending=[True, False])
    )
