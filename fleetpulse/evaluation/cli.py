"""``fleetpulse score``: detector findings scored against the simulator's ground truth.

The command imports what it runs when it runs (Polars, the policy), so ``fleetpulse --help`` stays fast.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated, Literal

import typer

from ground.cli_context import settings_of
from ground.tables import FormatOpt, OutputFormat, messages

app = typer.Typer()


@app.command()
def score(
    ctx: typer.Context,
    truth: Annotated[
        list[Path],
        typer.Option(
            help="Simulator ground-truth directory (--truth-out). Repeat it for a continued run, oldest first "
            "(e.g. the fast-forward history, then its live continuation)."
        ),
    ],
    findings_from: Annotated[
        Literal["kafka", "lake"], typer.Option(help="Where to read FindingRaised.")
    ] = "kafka",
    lake: Annotated[Path | None, typer.Option(help="Lake root (default lake.path).")] = None,
    topic: Annotated[str | None, typer.Option(help="Findings topic (default topics.findings.name).")] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the report as JSON here.")
    ] = None,
    policy: Annotated[
        Path | None,
        typer.Option(
            help="Detection policy the detectors ran: its thresholds give the lag after threshold and "
            "'rule met', never what must be found (the truth's materiality) "
            "(default: settings detect.policy_file, else the packaged ground/policy.toml)."
        ),
    ] = None,
    window_s: Annotated[
        float | None, typer.Option(help="Slow-host window length (default: the policy's).")
    ] = None,
    slow_k: Annotated[
        int | None,
        typer.Option(help="The slow-host rule's k, recorded in the report (default: the policy's k)."),
    ] = None,
    rule: Annotated[
        list[str] | None,
        typer.Option(
            help="Override a lemon rule (lag after threshold): KIND=COUNT/DURATION, e.g. dram_uce=2/7d."
        ),
    ] = None,
    timeout_s: Annotated[float, typer.Option(help="Max time to read the findings topic.")] = 60.0,
    pages: Annotated[
        bool, typer.Option(help="Also score the alerts sent (pages per true incident), from the same source.")
    ] = True,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Score detector findings against the simulator's ground truth: TP/FP/FN, precision, recall, time to detect."""
    from fleetpulse.evaluation.alerts_io import alerts_from_kafka, alerts_from_lake
    from fleetpulse.evaluation.incidents import relapses_of
    from fleetpulse.evaluation.pages import score_pages
    from fleetpulse.evaluation.policy_rules import rules_from_policy
    from fleetpulse.evaluation.render import render
    from fleetpulse.evaluation.sources import (
        findings_from_kafka,
        findings_from_lake,
        load_truth,
        parse_rule,
        score_with_policy,
    )
    from streams.core.policy import load_policy

    settings = settings_of(ctx)
    detection = load_policy(policy or settings.detect.policy_file)  # the policy the detectors ran
    rules = rules_from_policy(detection)
    rules.update(parse_rule(r) for r in rule or [])
    truth_frames = load_truth(truth)
    console = messages(fmt)
    with console.status(f"reading findings from {findings_from}"):
        if findings_from == "lake":
            found = findings_from_lake(lake or settings.lake.path)
        else:
            found = findings_from_kafka(settings, topic, timeout_s)
    report = score_with_policy(found, truth_frames, detection, rules=rules, window_s=window_s, slow_k=slow_k)
    if pages:
        with console.status(f"reading alerts from {findings_from}"):
            alerts = (
                alerts_from_lake(lake or settings.lake.path)
                if findings_from == "lake"
                else alerts_from_kafka(settings, timeout_s=timeout_s)
            )
        fleet = relapses_of(truth_frames[2].get("closed_loop"))  # the fleet's own incidents
        report = dataclasses.replace(
            report, pages=score_pages(alerts, report, findings=found, relapses=fleet)
        )
    if truth_frames[2].get("closed_loop"):
        report = dataclasses.replace(report, fleet_answer=truth_frames[2]["closed_loop"])
    render(report, console, fmt=fmt)
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(report.to_json())
        console.print(f"report written to {json_out}")
