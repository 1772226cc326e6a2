"""A halted campaign's evidence from the lake (pure): the rates, counts and interval its page carried.

The planner writes a halt's evidence as the ``campaign_halted`` action's reason, in the forms
``ground.halt_evidence`` writes and reads; one row per test that found the new version worse.
"""

from __future__ import annotations

import polars as pl

from ground.halt_evidence import CLASS_PATTERN, PARTS, ROLLBACK, STEP_PATTERN

STEP_FIELDS = ("windows", "effect", "effect_lo", "effect_hi", "llr", "llr_threshold")
HALT_FIELDS = (
    "new_count",
    "new_host_days",
    "new_rate",
    "old_count",
    "old_host_days",
    "old_rate",
    *STEP_FIELDS,
)
RENAMED = {"new_host_days": "new_exposure", "old_host_days": "old_exposure"}  # the patterns' names


def halts(steps_: pl.LazyFrame) -> pl.LazyFrame:
    """Each halt's evidence, one row per test that found the new version worse: counts, host-days and rates
    per version with the rate ratio and its 95 % interval (a fault class), or the step time's change in %
    (``step time``); the sequential test's log LR and threshold. A part in no known form keeps its text."""
    parts = (
        steps_.filter(pl.col("step") == "campaign_halted")
        .select(
            "campaign_id",
            "ts",
            pl.col("reason").str.split(ROLLBACK).list.first().str.split(PARTS).alias("evidence"),
        )
        .explode("evidence")
        .filter(pl.col("evidence").is_not_null() & (pl.col("evidence") != ""))
    )
    cls = pl.col("evidence").str.extract_groups(CLASS_PATTERN)
    step = pl.col("evidence").str.extract_groups(STEP_PATTERN)

    def field(name: str) -> pl.Expr:
        found = [cls.struct.field(RENAMED.get(name, name))] if name != "windows" else []
        found += [step.struct.field(name)] if name in STEP_FIELDS else []
        return pl.coalesce(found).cast(pl.Float64).alias(name)

    return parts.select(
        "campaign_id",
        "ts",
        pl.coalesce(cls.struct.field("test"), step.struct.field("test")).alias("test"),
        pl.when(cls.struct.field("test").is_not_null())
        .then(pl.lit("rate ratio"))
        .when(step.struct.field("test").is_not_null())
        .then(pl.lit("% step time"))
        .alias("effect_unit"),
        *(field(n) for n in HALT_FIELDS),
        "evidence",
    ).sort("campaign_id", "ts")
