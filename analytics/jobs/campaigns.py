"""Change campaigns' timelines from the lake (pure): hosts per version, hosts out per domain, halts with evidence.

Read from the ``campaigns`` table (people's steps) and the change operations of
``maintenance_action_recorded`` (the planner's visits and its ``campaign_halted`` / ``campaign_completed``),
as the planner folds them (``streams.trains.campaign``): a host runs the campaign's version from its
``change_applied`` (back on the old one from its rollback's), and is out for the change from its
``change_requested`` to its ``verified``. A rollback's moves are drawn on the campaign it rolls back.
Series are one row per change (a step function), so a peak is measured, never sampled.
"""

from __future__ import annotations

import polars as pl

from ground.domain_buffer import budget
from ground.halt_evidence import ROLLBACK
from schemas.events import FLEET

CHANGE = "change"  # the operation of a campaign's host visit
# what each step leaves a campaign in; aborted and completed are final
STATE_OF = {
    "started": "running",
    "resumed": "running",
    "paused": "paused",
    "aborted": "aborted",
    "campaign_halted": "halted",
    "campaign_completed": "completed",
}
PLANNER_STEPS = ("campaign_halted", "campaign_completed", "gate_opened")


def started(campaigns: pl.LazyFrame) -> pl.LazyFrame:
    """One row per campaign, from its ``started`` record; ``root`` is the campaign a rollback rolls back."""
    return (
        campaigns.filter(pl.col("kind") == "started")
        .sort("ts")
        .group_by("campaign_id")
        .agg(pl.all().first())
        .select(
            "campaign_id",
            pl.col("ts").alias("started_ts"),
            "component",
            "version",
            "scope",
            "hosts",
            "max_parallel_domains",
            "rollback_of",
            pl.coalesce("rollback_of", "campaign_id").alias("root"),
        )
        .sort("started_ts", "campaign_id")
    )


def visits(actions: pl.LazyFrame) -> pl.LazyFrame:
    """One row per campaign and host it visited: its domain, the version it ran before, and when its change
    was queued, requested, applied and verified (each the first such action; null: not yet)."""

    def first(kind: str) -> pl.Expr:
        return pl.col("ts").filter(pl.col("kind") == kind).min()

    return (
        actions.filter(
            (pl.col("operation") == CHANGE)
            & (pl.col("host_id") != FLEET)
            & pl.col("finding_id").is_not_null()
        )
        .sort("ts")
        .group_by(pl.col("finding_id").alias("campaign_id"), "host_id")
        .agg(
            pl.col("maintenance_domain").first().alias("domain"),
            pl.col("rule").drop_nulls().first().alias("previous"),
            first("suspected").alias("queued_ts"),
            first("change_requested").alias("requested_ts"),
            first("change_applied").alias("applied_ts"),
            first("verified").alias("done_ts"),
        )
        .sort("campaign_id", "host_id")
    )


def steps(campaigns: pl.LazyFrame, actions: pl.LazyFrame) -> pl.LazyFrame:
    """Every campaign's steps in time order: people's (started, paused, …) and the planner's (halts with their
    evidence as the reason, the gate, completion)."""
    reason = pl.col("reason").fill_null("")
    people = campaigns.select("ts", "campaign_id", pl.col("kind").alias("step"), reason)
    planner = actions.filter(
        (pl.col("host_id") == FLEET) & (pl.col("operation") == CHANGE) & pl.col("kind").is_in(PLANNER_STEPS)
    ).select("ts", pl.col("finding_id").alias("campaign_id"), pl.col("kind").alias("step"), reason)
    return pl.concat([people, planner]).sort("ts", "campaign_id", maintain_order=True)


def states(steps_: pl.LazyFrame) -> pl.LazyFrame:
    """Each campaign's state after its last step: once aborted or completed it stays so (a halt at the
    instant of an abort leaves it aborted, as the fold does)."""
    final = pl.col("state").is_in(["aborted", "completed"])
    return (
        steps_.filter(pl.col("step").is_in(list(STATE_OF)))
        .with_columns(pl.col("step").replace_strict(STATE_OF).alias("state"))
        .group_by("campaign_id")
        .agg(
            pl.coalesce(pl.col("state").filter(final).first(), pl.col("state").last()).alias("state"),
            pl.coalesce(pl.col("ts").filter(final).first(), pl.col("ts").last()).alias("state_ts"),
        )
    )


def versions_over_time(started_: pl.LazyFrame, visits_: pl.LazyFrame) -> pl.LazyFrame:
    """Hosts per version after each change, per campaign (its rollbacks' moves included): the hosts it
    asked to change start on the version they ran (``?``: unknown) at its start."""
    v = visits_.join(started_.select("campaign_id", "root", "version", "started_ts"), on="campaign_id")
    initial = v.filter(
        (pl.col("campaign_id") == pl.col("root")) & pl.col("requested_ts").is_not_null()
    ).select(
        pl.col("root").alias("campaign_id"),
        pl.col("started_ts").alias("ts"),
        "host_id",
        pl.col("previous").fill_null("?").alias("version"),
        pl.lit(0).alias("order"),
    )
    moves = v.filter(pl.col("applied_ts").is_not_null()).select(
        pl.col("root").alias("campaign_id"),
        pl.col("applied_ts").alias("ts"),
        "host_id",
        "version",
        pl.lit(1).alias("order"),
    )
    seq = (
        pl.concat([initial, moves])
        .sort("campaign_id", "host_id", "ts", "order")
        .with_columns(pl.col("version").shift(1).over("campaign_id", "host_id").alias("before"))
    )
    gains = seq.select("campaign_id", "ts", "version", pl.lit(1).alias("delta"))
    losses = seq.filter(pl.col("before").is_not_null()).select(
        "campaign_id", "ts", pl.col("before").alias("version"), pl.lit(-1).alias("delta")
    )
    hosts = _running(pl.concat([gains, losses]), ("campaign_id", "version"), "hosts")
    return hosts.select("campaign_id", "ts", "version", "hosts").sort("campaign_id", "ts", "version")


def out_over_time(visits_: pl.LazyFrame) -> pl.LazyFrame:
    """Hosts out for the change per campaign and domain after each change (requested to verified)."""
    asked = visits_.filter(pl.col("requested_ts").is_not_null())
    spans = pl.concat(
        [
            asked.select(
                "campaign_id", "domain", pl.col("requested_ts").alias("ts"), pl.lit(1).alias("delta")
            ),
            asked.filter(pl.col("done_ts").is_not_null()).select(
                "campaign_id", "domain", pl.col("done_ts").alias("ts"), pl.lit(-1).alias("delta")
            ),
        ]
    )
    return _running(spans, ("campaign_id", "domain"), "out")


def domains_over_time(out: pl.LazyFrame) -> pl.LazyFrame:
    """How many domains had a host out for the campaign's change, after each change."""
    busy = (pl.col("out") > 0).cast(pl.Int64)
    moved = out.with_columns(
        (busy - busy.shift(1, fill_value=0).over("campaign_id", "domain")).alias("delta")
    )
    return _running(moved.filter(pl.col("delta") != 0), ("campaign_id",), "domains")


def _running(deltas: pl.LazyFrame, by: tuple[str, ...], name: str) -> pl.LazyFrame:
    """The running sum of ``delta`` per ``by`` after each instant: changes at one instant count together,
    so a host leaving as another comes (or a domain freed as another starts) is no peak."""
    return (
        deltas.group_by(*by, "ts")
        .agg(pl.col("delta").sum())
        .sort(*by, "ts")
        .select(*by, "ts", pl.col("delta").cum_sum().over(*by).alias(name))
    )


def domain_buffers(inventory: pl.LazyFrame, capacity_buffer_pct: float) -> pl.LazyFrame:
    """Each domain's size (inventoried hosts) and capacity buffer, by the planner's rule (``ground.domain_buffer``)."""
    return (
        inventory.group_by(pl.col("maintenance_domain").alias("domain"))
        .agg(pl.len().alias("size"))
        .with_columns(
            pl.col("size")
            .map_elements(lambda n: budget(int(n), capacity_buffer_pct), return_dtype=pl.Int64)
            .alias("buffer")
        )
        .sort("domain")
    )


def in_scope(started_: pl.LazyFrame, inventory: pl.LazyFrame) -> pl.LazyFrame:
    """Inventoried hosts each campaign covers: its hosts if it names some, else those of its clusters or
    domains (the whole fleet when its scope is empty)."""
    hosts, scope = pl.col("hosts"), pl.col("scope")
    covers = (hosts.list.len() == 0) | hosts.list.contains(pl.col("host_id"))
    covers &= (
        (scope.list.len() == 0)
        | scope.list.contains(pl.col("cluster"))
        | scope.list.contains(pl.col("maintenance_domain"))
    )
    pairs = started_.select("campaign_id", "hosts", "scope").join(
        inventory.select("host_id", "cluster", "maintenance_domain"), how="cross"
    )
    return pairs.filter(covers).group_by("campaign_id").agg(pl.len().alias("hosts_total"))


def campaign_table(
    started_: pl.LazyFrame,
    steps_: pl.LazyFrame,
    visits_: pl.LazyFrame,
    out: pl.LazyFrame,
    buffers: pl.LazyFrame,
    scoped: pl.LazyFrame,
) -> pl.LazyFrame:
    """One row per campaign: its change and state, hosts done of those in scope, the most domains out at once
    (and the most allowed), the domain most out against its buffer, and its last halt's evidence."""
    done = visits_.group_by("campaign_id").agg(
        pl.col("requested_ts").is_not_null().sum().alias("hosts_changed"),
        pl.col("done_ts").is_not_null().sum().alias("hosts_done"),
    )
    widest = (
        domains_over_time(out)
        .group_by("campaign_id")
        .agg(pl.col("domains").max().alias("max_domains_at_once"))
    )
    worst = (
        out.group_by("campaign_id", "domain")
        .agg(pl.col("out").max().alias("max_out"))
        .join(buffers, on="domain", how="left")
        .with_columns((pl.col("max_out") / pl.col("buffer")).alias("of_buffer"))
        .sort(
            "campaign_id",
            "of_buffer",
            "max_out",
            "domain",
            descending=[False, True, True, False],
            nulls_last=True,
        )
        .group_by("campaign_id", maintain_order=True)
        .agg(
            pl.col("domain").first().alias("max_out_domain"),
            pl.col("max_out").first(),
            pl.col("buffer").first(),
            (pl.col("max_out") > pl.col("buffer")).sum().alias("domains_over_buffer"),
        )
    )
    halted = (
        steps_.filter(pl.col("step") == "campaign_halted")
        .group_by("campaign_id")
        .agg(
            pl.len().alias("halts"),
            pl.col("ts").last().alias("halted_ts"),
            pl.col("reason").last().str.split(ROLLBACK).list.first().alias("halt_evidence"),
        )
    )
    return (
        started_.join(states(steps_), on="campaign_id", how="left")
        .join(scoped, on="campaign_id", how="left")
        .join(done, on="campaign_id", how="left")
        .join(widest, on="campaign_id", how="left")
        .join(worst, on="campaign_id", how="left")
        .join(halted, on="campaign_id", how="left")
        .select(
            "campaign_id",
            (pl.col("component") + "=" + pl.col("version")).alias("change"),
            "rollback_of",
            "state",
            "started_ts",
            pl.col("hosts_done").fill_null(0),
            pl.col("hosts_changed").fill_null(0),
            pl.col("hosts_total").fill_null(0),
            pl.col("max_domains_at_once").fill_null(0),
            "max_parallel_domains",
            pl.col("max_out").fill_null(0),
            "buffer",
            "max_out_domain",
            pl.col("domains_over_buffer").fill_null(0),
            pl.col("halts").fill_null(0),
            "halted_ts",
            "halt_evidence",
        )
        .sort("started_ts", "campaign_id")
    )
