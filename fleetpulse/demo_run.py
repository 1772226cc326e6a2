"""The demo's phases: broker, topics, parts, simulated history and live traffic, drain, batch, summary."""

from __future__ import annotations

import json
import logging
import secrets
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from pydantic import SecretStr
from rich.console import Console

from analytics.lake import Lake
from fleetpulse.broker import ensure_running
from fleetpulse.demo_loop import loop_figures, segment_jobs
from fleetpulse.demo_parts import live_simulator_argv, metrics_port_args, simulator_command, start_parts
from fleetpulse.demo_summary import print_summary
from fleetpulse.supervisor import Supervisor, wait_until
from ground.kafka.admin import ensure_topics
from ground.kafka.reading import event_type_counts, group_lags, read_to_end, record_count
from ground.launch import child_env, fleetpulse_argv
from schemas import Codec
from streams.topology import consumer_groups

if TYPE_CHECKING:
    from ground.settings import Settings

console = Console()


@dataclass(frozen=True)
class DemoPlan:
    run_id: str
    run_dir: Path
    preset: str
    history_days: float
    live_seconds: float
    speed: float
    seed: int
    workers: int
    receiver_port: int
    web_ports: list[int]  # each detector's API, which serves its /metrics too
    dispatch_metrics_port: int = 0  # 0: the part serves no metrics
    archive_metrics_port: int = 0
    drain_timeout_s: float = 120.0
    closed_loop: bool = True  # the simulated fleet answers the planner's actions (``fleetpulse loop``)
    # closed loop, fast-forward: the fleet answers before every Nth 6-hour tick (``fleetpulse loop --answer-every``):
    # once per two simulated days, so an action lands up to two days after it was decided (docs/DESIGN.md)
    answer_every: int = 8
    # fresh per run, and a SecretStr: masked in the plan's repr, which logs and tracebacks may show
    webhook_secret: SecretStr = field(default_factory=lambda: SecretStr(secrets.token_urlsafe(32)))

    @property
    def topic_prefix(self) -> str:
        return f"{self.run_id}."

    @property
    def lake(self) -> Path:
        return self.run_dir / "lake"

    @property
    def truth(self) -> Path:
        return self.run_dir / "truth"

    @property
    def live_truth(self) -> Path:
        """The live continuation's own truth (its faults; the history's files stay as they were)."""
        return self.run_dir / "truth-live"

    @property
    def truth_segments(self) -> list[Path]:
        """Every truth directory of the run, oldest first (what ``fleetpulse score`` joins)."""
        return [self.truth, self.live_truth] if self.live_seconds > 0 else [self.truth]

    @property
    def report_dir(self) -> Path:
        return self.run_dir / "report"

    @property
    def receiver_url(self) -> str:
        return f"http://127.0.0.1:{self.receiver_port}"

    @property
    def metrics_urls(self) -> dict[str, str]:
        """Each long-running part's Prometheus endpoint (a part without a port has none)."""
        ports = {f"detect-{i}": p for i, p in enumerate(self.web_ports)}
        ports |= {"dispatch": self.dispatch_metrics_port, "archive": self.archive_metrics_port}
        return {part: f"http://127.0.0.1:{port}/metrics" for part, port in ports.items() if port}


def run_settings(settings: Settings, plan: DemoPlan, bootstrap: str) -> Settings:
    """The settings every part of this run gets: its own topics, groups, outbox, lake and receiver."""
    return (
        settings.with_section("kafka", bootstrap_servers=bootstrap)
        .with_section("topics", prefix=plan.topic_prefix)
        # closed loop the simulator waits for the detect worker's commits before each tick: commit often
        .with_section(
            "detect", app_id=f"{plan.run_id}-detect", commit_interval_s=0.25 if plan.closed_loop else 1.0
        )
        .with_section(
            "webhooks",
            urls=[f"{plan.receiver_url}/alerts"],
            secret=plan.webhook_secret,
            group_id=f"{plan.run_id}-webhooks",
            data_dir=plan.run_dir / "outbox",
            backoff_base_s=0.5,
            backoff_max_s=5.0,
        )
        .with_section("lake", path=str(plan.lake), group_id=f"{plan.run_id}-archiver")
    )


class Phases:
    """Prints each phase with its duration; the whole run's clock starts at construction."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.timings: dict[str, float] = {}

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.monotonic()
        with console.status(f"[bold]{name}[/] …"):
            yield
        took = time.monotonic() - start
        self.timings[name] = took
        console.print(f"[green]✓[/] {name} [dim]({took:.1f} s, total {time.monotonic() - self.t0:.0f} s)[/]")


def run_demo(settings: Settings, plan: DemoPlan) -> dict[str, Any]:
    logging.getLogger("kafka").setLevel(logging.ERROR)  # the demo's own stats client; parts log to files
    plan.run_dir.mkdir(parents=True, exist_ok=True)
    phases = Phases()
    console.print(f"[bold]fleetpulse demo[/] run [cyan]{plan.run_id}[/] → {plan.run_dir}")
    with phases.phase("Kafka broker (local, KRaft)"):
        bootstrap = ensure_running(settings)
    parts_settings = run_settings(settings, plan, bootstrap)
    env = child_env(parts_settings)
    with phases.phase("topics"):
        ensure_topics(parts_settings)

    summary: dict[str, Any] = {
        "run_id": plan.run_id,
        "run_dir": str(plan.run_dir),
        "metrics": plan.metrics_urls,
    }
    with Supervisor(plan.run_dir / "logs", env) as sup:
        with phases.phase("parts started: webhook receiver, detectors, dispatcher, archiver"):
            parts = start_parts(sup, plan)
        for part, url in plan.metrics_urls.items():
            console.print(f"  metrics: {part} [cyan]{url}[/]")

        loop = "closed loop, in lockstep with the pipeline" if plan.closed_loop else "open loop"
        with phases.phase(
            f"simulated history: {plan.history_days:g} days of the {plan.preset} fleet (fast-forward, {loop})"
        ):
            history = [
                "--preset",
                plan.preset,
                "--mode",
                "fast-forward",
                "--days",
                str(plan.history_days),
                "--seed",
                str(plan.seed),
                "--truth-out",
                str(plan.truth),
            ]
            if plan.closed_loop:
                history += ["--answer-every", str(plan.answer_every)]
            else:
                history.append("--no-progress")
            sup.run("simulate-history", fleetpulse_argv(simulator_command(plan), *history), timeout_s=1200)
        if plan.live_seconds > 0:
            with phases.phase(f"live traffic: {plan.live_seconds:g} s at {plan.speed:g}× real time"):
                sup.run("simulate-live", live_simulator_argv(plan), timeout_s=plan.live_seconds + 300)
        with phases.phase("detectors and dispatcher catch up"):
            _drain(parts_settings, plan, sup, [*parts.detectors, parts.dispatcher, parts.receiver])
        with phases.phase("archiver catches up (exactly once into the lake)"):
            parts.archiver.stop()
            final = fleetpulse_argv("archive", "--until-idle", *metrics_port_args(plan.archive_metrics_port))
            sup.run("archive-final", final, timeout_s=600)
        stats = _receiver_stats(plan)
        api = _api_snapshot(plan)

    with phases.phase("quality gates (great-expectations) over the lake"):
        gates = _quality(plan, env)
    with phases.phase("analytics jobs and HTML report"):
        _run_plain(
            ["report", "--lake", str(plan.lake), "--truth", str(plan.truth), "--out", str(plan.report_dir)],
            plan,
            env,
        )
    with phases.phase("detection scored against the simulator's truth"):
        score_file = plan.run_dir / "score.json"
        truths = [arg for t in plan.truth_segments for arg in ("--truth", str(t))]
        _run_plain(["score", *truths, "--findings-from", "kafka", "--json", str(score_file)], plan, env)
        score = json.loads(score_file.read_text())

    summary.update(_collect(parts_settings, plan, stats, score, gates, api))
    summary["elapsed_s"] = round(time.monotonic() - phases.t0, 1)
    summary["phases_s"] = {k: round(v, 1) for k, v in phases.timings.items()}
    print_summary(console, summary, plan.run_id, plan.run_dir)
    return summary


def _receiver_stats(plan: DemoPlan) -> dict[str, Any]:
    try:
        return dict(httpx.get(f"{plan.receiver_url}/stats", timeout=5).json())
    except httpx.HTTPError:
        return {}


def _api_snapshot(plan: DemoPlan) -> dict[str, Any]:
    try:
        return {"domains": httpx.get(f"http://127.0.0.1:{plan.web_ports[0]}/domains", timeout=5).json()}
    except (httpx.HTTPError, ValueError):
        return {}


def _drain(settings: Settings, plan: DemoPlan, sup: Supervisor, parts: list[Any]) -> None:
    """Wait until the detectors have read every input record and the receiver has every alert."""

    inputs = {settings.topics.samples.name, settings.topics.errors.name}
    detect = settings.detect.model_copy(update={"app_id": f"{plan.run_id}-detect"})
    groups = consumer_groups(settings.model_copy(update={"detect": detect}))
    kafka = settings.kafka
    bootstrap = settings.bootstrap_servers

    def detectors_done() -> bool:
        sup.check_alive(*parts)
        lags = [
            group_lags(bootstrap, kafka, g, [t for t in topics if t in inputs])
            for g, topics in groups.items()
        ]
        return all(lag == 0 for per_topic in lags for lag in per_topic.values())

    if not wait_until(detectors_done, plan.drain_timeout_s, interval_s=2):
        console.print("[yellow]detectors did not fully catch up within the drain timeout[/]")

    def alerts_delivered() -> bool:
        sup.check_alive(*parts)
        produced = record_count(bootstrap, kafka, settings.topics.alerts.name)
        stats = _receiver_stats(plan)
        return int(stats.get("received", 0)) >= produced

    time.sleep(3)  # findings → planner → alerts is a second hop after the inputs drain
    if not wait_until(alerts_delivered, 60, interval_s=2):
        console.print("[yellow]not every alert reached the receiver yet (the outbox keeps retrying)[/]")


def _run_plain(args: list[str], plan: DemoPlan, env: dict[str, str]) -> None:
    with Supervisor(plan.run_dir / "logs", env) as sup:
        sup.run(args[0], fleetpulse_argv(*args), timeout_s=900)


def _quality(plan: DemoPlan, env: dict[str, str]) -> dict[str, Any]:
    """Re-check every published lake partition and list quarantined batches (what readers never see)."""

    proc = subprocess.run(
        fleetpulse_argv("lake", "validate", "--lake", str(plan.lake)),
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    (plan.run_dir / "logs" / "lake-validate.log").write_text(proc.stdout + proc.stderr)
    quarantined = Lake(plan.lake).quarantine()
    return {
        "validate_exit_code": proc.returncode,
        "quarantined_batches": len(quarantined),
        "quarantined": [
            {"table": q.table, "rows": q.rows, "failed": list(q.failed_expectations)[:5]} for q in quarantined
        ],
    }


def _collect(
    settings: Settings,
    plan: DemoPlan,
    stats: dict[str, Any],
    score: dict[str, Any],
    gates: Any,
    api: dict[str, Any],
) -> dict[str, Any]:
    bootstrap, kafka = settings.bootstrap_servers, settings.kafka
    events = {
        t.name: record_count(bootstrap, kafka, t.name)
        for t in (settings.topics.inventory, settings.topics.samples, settings.topics.errors)
    }
    findings = Counter[str]()
    actions = Counter[str]()
    codec = Codec()

    finding_records = [
        codec.decode(rec.value).record for rec in read_to_end(bootstrap, kafka, settings.topics.findings.name)
    ]
    alert_records = [
        codec.decode(rec.value).record for rec in read_to_end(bootstrap, kafka, settings.topics.alerts.name)
    ]
    for record in finding_records:
        findings[record["payload"]["detector"]] += 1
    for rec in read_to_end(bootstrap, kafka, settings.topics.actions.name):
        decoded = codec.decode(rec.value)
        if decoded.event_type == "MaintenanceActionRecorded":
            actions[decoded.record["payload"]["kind"]] += 1
    return {
        "events": events,
        "dlq": sum(event_type_counts(bootstrap, kafka, settings.topics.dlq.name).values()),
        "findings": dict(findings),
        "actions": dict(actions),
        "alerts": {"produced": record_count(bootstrap, kafka, settings.topics.alerts.name), **stats},
        "score": score,
        "quality": gates,
        "report": str(plan.report_dir / "report.html"),
        "planner": api,
        "truth_counts": truth_counts(plan.truth_segments),
        "closed_loop": plan.closed_loop,
        "loop": loop_figures(plan.truth_segments, finding_records, alert_records),
        "jobs": segment_jobs(plan.truth_segments),
    }


def truth_counts(segments: list[Path]) -> dict[str, int]:
    """Events per type the simulator recorded, over the history and its live continuation."""
    total: Counter[str] = Counter()
    for folder in segments:
        manifest = folder / "manifest.json"
        if manifest.exists():
            total.update(json.loads(manifest.read_text()).get("counts", {}))
    return dict(sorted(total.items()))
