"""One backtest: each policy variant replayed over one history, compared with the live output and the truth.

Pure over its inputs (a ``History``, variants, optionally a truth): the command reads them, this
module decides, ``fleetpulse.backtest.report`` writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from fleetpulse.backtest.capacity import CapacityImpact, capacity_impact
from fleetpulse.backtest.compare import action_diff, finding_diff, score_against
from fleetpulse.backtest.events import History
from fleetpulse.backtest.replay import DEFAULT_TICK_MS, ReplayResult, replay
from fleetpulse.backtest.shared import replays
from fleetpulse.backtest.sweep import Variant
from fleetpulse.evaluation.detection import DETECTORS, ScoreReport
from fleetpulse.evaluation.sources import Truth
from ground.settings.detect import PlanOrder
from streams.core.inventory import Inventory


@dataclass(frozen=True, slots=True)
class VariantResult:
    """What one policy variant would have done, and how that differs from what was done."""

    variant: Variant
    replay: ReplayResult
    findings: pl.DataFrame  # finding_diff: every finding of the backtest or the live run once
    actions: pl.DataFrame  # action_diff: per kind, backtest vs live
    capacity: CapacityImpact
    score: ScoreReport | None

    def counts(self) -> dict[str, int]:
        """Findings per status (both, backtest only, live only)."""
        found = dict(self.findings.group_by("status").len().iter_rows())
        return {s: int(found.get(s, 0)) for s in ("both", "backtest only", "live only")}


def variant_result(
    history: History, variant: Variant, result: ReplayResult, truth: Truth | None = None
) -> VariantResult:
    """What ``result`` (the variant's replay of ``history``) differs in from the live run, and its scores."""
    inventory = Inventory()
    for record in history.inventory:
        inventory.apply(record)
    start = result.start_ts if result.start_ts is not None else 0
    end = result.end_ts if result.end_ts is not None else start
    return VariantResult(
        variant=variant,
        replay=result,
        findings=finding_diff(result.findings, history.live_findings),
        actions=action_diff(result.actions, history.live_actions),
        capacity=capacity_impact(result.actions, result.fleet.outages, start, end, inventory.domain_of),
        score=score_against(result.findings, truth, variant.policy) if truth is not None else None,
    )


def run_variant(
    history: History,
    variant: Variant,
    truth: Truth | None = None,
    *,
    tick_ms: int = DEFAULT_TICK_MS,
    plan_order: PlanOrder = "event_time",
) -> VariantResult:
    result = replay(history, variant.policy, tick_ms=tick_ms, plan_order=plan_order)
    return variant_result(history, variant, result, truth)


def run_backtest(
    history: History,
    variants: Sequence[Variant],
    truth: Truth | None = None,
    *,
    tick_ms: int = DEFAULT_TICK_MS,
    plan_order: PlanOrder = "event_time",
) -> list[VariantResult]:
    """Every variant over ``history``; variants that agree on what the shared stages read share one run of
    them (``fleetpulse.backtest.shared``), each deciding what its own replay would."""
    results = replays(history, [v.policy for v in variants], tick_ms=tick_ms, plan_order=plan_order)
    return [variant_result(history, v, r, truth) for v, r in zip(variants, results, strict=True)]


def sweep_table(results: Sequence[VariantResult]) -> pl.DataFrame:
    """One row per variant: the values it set, its findings against the live ones, capacity, and scores."""
    rows: list[dict[str, Any]] = []
    for r in results:
        row: dict[str, Any] = {k: str(v) for k, v in r.variant.values}
        row["findings"] = len(r.replay.findings)
        row.update({f"findings {k}": v for k, v in r.counts().items()})
        row.update(r.capacity.summary())
        if r.score is not None:
            for name in DETECTORS:
                d = r.score.detectors.get(name)
                row[f"{name} precision"] = None if d is None else d.precision
                row[f"{name} recall"] = None if d is None else d.recall
                row[f"{name} ttd_median_h"] = (
                    None if d is None or d.ttd_median_s is None else d.ttd_median_s / 3600
                )
        rows.append(row)
    return pl.DataFrame(rows, infer_schema_length=None)
