"""The I/O shell of the campaigns job: read the lake's campaign records, change actions and inventory, call
``analytics.jobs.campaigns``, and say what the tables rest on. A lake with no campaign gives empty tables
and says so: no campaign is an answer, not a failure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from analytics.jobs import campaigns as c
from analytics.jobs.campaign_halts import halts
from analytics.jobs.coverage import Coverage, coverage_of
from analytics.jobs.result import JobResult
from analytics.jobs.source import latest_inventory, scan_optional, unique_events
from ground.domain_buffer import PACKAGED_CAPACITY_BUFFER_PCT
from schemas.arrow import table_schema

Lake = str | Path
NAME = "campaigns"
CAMPAIGNS_TABLE = "campaigns"
ACTIONS_TABLE = "maintenance_action_recorded"
INVENTORY_TABLE = "host_inventoried"
EVENT_TYPES = {
    CAMPAIGNS_TABLE: "CampaignRecorded",
    ACTIONS_TABLE: "MaintenanceActionRecorded",
    INVENTORY_TABLE: "HostInventoried",
}


def _read(lake: Lake, table: str, rows: pl.Expr | None = None) -> tuple[pl.LazyFrame, bool]:
    """The table's events (those ``rows`` keeps) once each, or an empty frame of its columns when the lake
    has none (False)."""
    found = scan_optional(lake, table)
    if found is None:
        return pl.LazyFrame(pl.from_arrow(table_schema(EVENT_TYPES[table]).empty_table())), False
    return unique_events(found if rows is None else found.filter(rows)), True


def run_campaigns(
    lake: Lake, truth: Lake | None = None, capacity_buffer_pct: float | None = None
) -> JobResult:
    """Every campaign's timeline: hosts per version and hosts out per domain after each change, its halts'
    evidence, and one summary row each. ``capacity_buffer_pct``: the planner's capacity buffer (default:
    the packaged policy's)."""
    notes: list[str] = []
    pct = PACKAGED_CAPACITY_BUFFER_PCT if capacity_buffer_pct is None else capacity_buffer_pct
    records, has_campaigns = _read(lake, CAMPAIGNS_TABLE)
    actions, has_actions = _read(lake, ACTIONS_TABLE, pl.col("operation") == c.CHANGE)  # not every repair
    inventory, has_inventory = _read(lake, INVENTORY_TABLE)
    inventory = latest_inventory(inventory).collect().lazy()
    if has_campaigns and not has_actions:
        notes.append(f"no {ACTIONS_TABLE} table: no host visit, halt or completion is known")
    if has_campaigns and not has_inventory:
        notes.append(f"no {INVENTORY_TABLE} table: hosts in scope and domain buffers are unknown")
    started = c.started(records).collect().lazy()
    visits = c.visits(actions).collect().lazy()
    steps = c.steps(records, actions).collect().lazy()
    out = c.out_over_time(visits).collect().lazy()
    buffers = c.domain_buffers(inventory, pct).collect()
    tables = {
        "campaigns": c.campaign_table(
            started, steps, visits, out, buffers.lazy(), c.in_scope(started, inventory)
        ).collect(),
        "halts": halts(steps).collect(),
        "versions": c.versions_over_time(started, visits).collect(),
        "out": out.collect(),
        "domains_out": c.domains_over_time(out).collect(),
        "steps": steps.collect(),
        "buffers": buffers,
    }
    named = records.select(pl.col("campaign_id").n_unique()).collect().item()
    halt_parts = tables["halts"]
    read = Coverage(tables["campaigns"].height, named, "campaigns", "with their start in the lake")
    parsed = Coverage(
        halt_parts.filter(pl.col("test").is_not_null()).height,
        halt_parts.height,
        "halt evidence parts",
        "read as rates, counts and interval",
    )
    cov = dict.fromkeys(("campaigns", "versions", "out", "domains_out", "steps"), read) | {"halts": parsed}
    table = tables["campaigns"]
    summary: dict[str, Any] = {
        "campaigns": table.height,
        "states": dict(sorted(table.group_by("state").len().iter_rows())) if table.height else {},
        "halts": int(table["halts"].sum()),
        "max_domains_at_once": int(table["max_domains_at_once"].max() or 0),  # type: ignore[arg-type]
        "domains_over_buffer": int(table["domains_over_buffer"].sum()),
        "capacity_buffer_pct": pct,
        "capacity_buffer_basis": (
            f"assumed: {pct:g} %, the packaged policy's [planner] capacity_buffer_pct"
            if capacity_buffer_pct is None
            else f"given: {pct:g} % (capacity_buffer_pct)"
        ),
        "coverage": coverage_of(cov),
    }
    return JobResult(NAME, tables, summary, notes)


def summary_lines(summary: dict[str, Any]) -> list[str]:
    """The report's lines on the campaigns (one, "no campaign", when the lake has none)."""
    if not summary["campaigns"]:
        return ["no campaign in the lake"]
    states = ", ".join(f"{n} {s}" for s, n in summary["states"].items())
    over = summary["domains_over_buffer"]
    return [
        f"{summary['campaigns']} campaign(s) ({states}), {summary['halts']} halt(s)",
        f"at most {summary['max_domains_at_once']} domain(s) out for a change at once; "
        + (f"{over} domain(s) past their buffer" if over else "no domain past its buffer")
        + f" (buffer {summary['capacity_buffer_basis']})",
    ]
