"""A backtest beside what really happened: the live detectors' findings and actions, and the simulator's truth.

Findings and actions carry deterministic ids (hashes of rule, scope and evidence), so the same
policy over the same history gives the same ids as the live workers: an id in one set and not the
other is a finding or action that a changed policy makes appear or disappear.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import polars as pl

from fleetpulse.backtest.events import Record
from fleetpulse.evaluation.detection import ScoreReport
from fleetpulse.evaluation.sources import FINDING_COLUMNS, Truth, score_with_policy
from streams.core.actions import Action
from streams.core.findings import Finding
from streams.core.policy import Policy

Status = Literal["both", "backtest only", "live only"]
DIFF_SCHEMA: dict[str, Any] = {
    "status": pl.Utf8,
    "finding_id": pl.Utf8,
    "detector": pl.Utf8,
    "rule": pl.Utf8,
    "host_id": pl.Utf8,
    "scope_key": pl.Utf8,
    "ts": pl.Int64,
    "recommended_action": pl.Utf8,
}


def _finding_row(status: Status, record: Record) -> dict[str, Any]:
    p = record["payload"]
    return {
        "status": status,
        "finding_id": p["finding_id"],
        "detector": p["detector"],
        "rule": p["rule"],
        "host_id": record["host_id"],
        "scope_key": p["scope_key"],
        "ts": record["ts"],
        "recommended_action": p["recommended_action"],
    }


def finding_diff(backtest: Sequence[Finding], live: Sequence[Record]) -> pl.DataFrame:
    """Every finding of either side once, with where it appears; ordered by event time, then id."""
    ours = {f.finding_id: f.to_record() for f in backtest}
    theirs = {r["payload"]["finding_id"]: r for r in live}
    rows = [_finding_row("both" if fid in theirs else "backtest only", r) for fid, r in ours.items()]
    rows += [_finding_row("live only", r) for fid, r in theirs.items() if fid not in ours]
    return pl.DataFrame(rows, schema=DIFF_SCHEMA).sort("ts", "finding_id")


def action_diff(backtest: Sequence[Action], live: Sequence[Record]) -> pl.DataFrame:
    """Per action kind: how many the backtest and the live planner recorded, and how many are the same action."""
    ours: dict[str, str] = {a.action_id: a.kind for a in backtest}
    theirs: dict[str, str] = {r["payload"]["action_id"]: r["payload"]["kind"] for r in live}
    kinds = sorted(set(ours.values()) | set(theirs.values()))
    rows = [
        {
            "kind": kind,
            "backtest": sum(1 for k in ours.values() if k == kind),
            "live": sum(1 for k in theirs.values() if k == kind),
            "both": sum(1 for a, k in ours.items() if k == kind and a in theirs),
        }
        for kind in kinds
    ]
    schema = {"kind": pl.Utf8, "backtest": pl.Int64, "live": pl.Int64, "both": pl.Int64}
    return pl.DataFrame(rows, schema=schema)


def findings_frame(findings: Sequence[Finding]) -> pl.DataFrame:
    """The columns ``fleetpulse score`` reads, from the backtest's findings."""
    rows = []
    for f in findings:
        record = f.to_record()
        row = {**record, **record["payload"]}
        rows.append({k: row.get(k) for k in FINDING_COLUMNS})
    return pl.DataFrame(rows, schema=FINDING_COLUMNS)


def score_against(findings: Sequence[Finding], truth: Truth, policy: Policy) -> ScoreReport:
    """Precision, recall and time to detect of the backtest's findings against the truth's material lemons
    and slow hosts (the same for every variant); the policy's own thresholds give lag and "rule met"."""
    return score_with_policy(findings_frame(findings), truth, policy)
