"""Steps the scenarios share: read a variant's outputs, judge them against a reference, fill a row."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fleetpulse.evaluation.faults import detection_score, split
from fleetpulse.faults.context import FaultContext, simulate
from fleetpulse.faults.counting import compare_findings, judge_actions, rmas_from_new_findings
from fleetpulse.faults.detectors import Detector
from fleetpulse.faults.kafka_io import records
from fleetpulse.faults.lifecycle_check import check_log
from fleetpulse.faults.results import ScenarioResult
from fleetpulse.faults.sandbox import variant
from producers.runner import parse_start

if TYPE_CHECKING:
    from ground.settings import Settings


@dataclass
class Outputs:
    """What one detect variant wrote."""

    findings: list[dict[str, Any]]
    actions: list[dict[str, Any]]
    alerts: list[dict[str, Any]]
    dlq: list[dict[str, Any]]
    score: dict[str, Any]


def outputs(settings: Settings, truth: Path) -> Outputs:
    t = settings.topics
    return Outputs(
        findings=records(settings, t.findings.name),
        actions=records(settings, t.actions.name),
        alerts=records(settings, t.alerts.name),
        dlq=records(settings, t.dlq.name),
        score=detection_score(settings, t.findings.name, truth),
    )


def judge(result: ScenarioResult, reference: Outputs, observed: Outputs, *, extras: bool = False) -> None:
    """Fill the findings/actions/RMA/precision/recall columns of ``result`` (faulty vs reference).

    ``extras``: also judge findings and actions the reference does not have (where the fault
    must not add any, e.g. duplicated input records).
    """
    findings = compare_findings(reference.findings, observed.findings)
    verdict = judge_actions(reference.actions, observed.actions, observed.findings)
    ref_log = check_log(reference.actions, reference.findings)
    new_rmas = rmas_from_new_findings(
        observed.actions, {r["payload"]["finding_id"] for r in reference.findings}
    )
    result.findings_lost = len(findings.lost)
    result.actions_lost = verdict.lost
    result.actions_broken = verdict.broken
    result.action_replays = verdict.replays
    result.duplicate_rmas = verdict.duplicate_rmas
    if extras:
        result.findings_extra = len(findings.extra)
        result.actions_extra = verdict.extra
    result.precision, result.recall = split(observed.score)
    result.reference_precision, result.reference_recall = split(reference.score)
    ref_alerts = {r["payload"]["alert_id"] for r in reference.alerts}
    obs_alerts = {r["payload"]["alert_id"] for r in observed.alerts}
    result.details.update(
        findings={
            "reference": findings.reference,
            "observed_distinct": findings.distinct,
            "observed_records": findings.records,
            "lost": findings.lost[:10],
            "extra": findings.extra[:10],
            "lost_described": describe_findings(reference.findings, findings.lost[:10]),
            "extra_described": describe_findings(observed.findings, findings.extra[:10]),
        },
        actions={
            "reference": len({r["payload"]["action_id"] for r in reference.actions}),
            "observed_distinct": len({r["payload"]["action_id"] for r in observed.actions}),
            "observed_records": len(observed.actions),
            "lost": verdict.lost,
            "extra": verdict.extra,
            "lost_kinds": verdict.lost_kinds,
            "extra_kinds": verdict.extra_kinds,
            "replays": verdict.replays,
            "broken": verdict.broken,
            "log_check": verdict.log_check,
            "reference_broken": ref_log.broken,
            "rmas_from_new_findings": new_rmas,
            "lost_ids": verdict.lost_ids,
            "extra_ids": verdict.extra_ids,
        },
        alerts_topic={
            "reference": len(ref_alerts),
            "observed": len(obs_alerts),
            "missing": len(ref_alerts - obs_alerts),
            "extra": len(obs_alerts - ref_alerts),
        },
        score={"faulty": observed.score, "reference": reference.score},
    )
    differs = verdict.lost or (extras and verdict.extra)
    if differs and not verdict.broken and not findings.lost:
        result.explanations.append(
            f"{verdict.lost} reference action(s) missing and {verdict.extra} extra, with the same findings and a "
            "complete action log (every step has its cause and successor, every finding was acted on or absorbed): "
            "the planner decided differently, it dropped nothing: findings of different hosts competing for a "
            "domain's last capacity slot arrive through different partitions, and their order changes "
            "(docs/RELIABILITY.md, last section); "
            f"lost {verdict.lost_kinds}, extra {verdict.extra_kinds}"
        )
    if verdict.duplicate_rmas and not new_rmas:
        result.explanations.append(
            f"{verdict.duplicate_rmas} RMA(s) more than the reference, each for a finding the reference raised too "
            "(and absorbed into an open operation): the same planner timing dependence, not a replayed failure"
        )
    if verdict.broken:
        result.explanations.append(
            f"the faulty run's action log is incomplete: {verdict.log_check} (steps dropped by the fault)"
        )


def reference_run(settings: Settings, folder: Path, scenario: str) -> Detector:
    """A clean worker (variant ``ref``) through the same input topics, drained and stopped."""
    reference = Detector(variant(settings, "ref"), folder / "ref", scenario)
    try:
        reference.start()
        reference.wait_drained()
    finally:
        reference.stop()
    return reference


def describe_findings(records: list[dict[str, Any]], ids: list[str]) -> list[str]:
    """One line per finding id: detector, scope and evidence window, so a differing id can be traced."""
    by_id = {r["payload"]["finding_id"]: r["payload"] for r in records}
    lines = []
    for fid in ids:
        p = by_id.get(fid)
        if p is None:
            continue
        lines.append(
            f"{fid} {p['detector']}/{p['rule']} {p['scope_key']} count={p['count']} "
            f"window={p['window_start']}..{p['window_end']} evidence={p.get('evidence')}"
        )
    return lines


def paced_producer(
    ctx: FaultContext, settings: Settings, truth: Path, produce_s: float, note: str = ""
) -> tuple[threading.Thread, dict[str, Any]]:
    """An unstarted thread that replays the fleet's history paced over ``produce_s`` into Kafka.

    The outcome dict gets ``sim`` (the SimulationResult) or ``error`` (reported in the result,
    so the scenario goes on counting instead of dying with the simulator).
    """

    outcome: dict[str, Any] = {}

    def produce() -> None:
        try:
            outcome["sim"] = simulate(
                ctx,
                settings,
                truth,
                mode="live",
                duration_s=produce_s,
                speed=ctx.days * 86_400 / produce_s,
                interval_s=settings.simulator.fast_forward_interval_s,
                start_ts=parse_start(settings.simulator.start),
            )
        except Exception as exc:  # noqa: BLE001 - reported in the result
            outcome["error"] = f"{type(exc).__name__}: {exc}"

    return threading.Thread(target=produce, name="fault-simulator", daemon=True), outcome
