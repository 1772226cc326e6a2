"""Command-line entry points of the streams package (merged into ``fleetpulse``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from ground.cli_context import settings_of
from ground.tables import FormatOpt, OutputFormat, messages, show

app = typer.Typer()

# Every command that reads a policy resolves it the same way, so one wording serves all their help texts.
POLICY_DEFAULT = "settings detect.policy_file, else the packaged ground/policy.toml"


@app.command("detect")
def detect(
    ctx: typer.Context,
    policy: Annotated[
        Path | None,
        typer.Option("--policy", help=f"Detection policy TOML (default: {POLICY_DEFAULT})."),
    ] = None,
    web_port: Annotated[
        int | None, typer.Option("--web-port", help="HTTP API / metrics port (default 6066).")
    ] = None,
    data_dir: Annotated[
        Path | None, typer.Option("--data-dir", help="Local table state (one per worker process).")
    ] = None,
) -> None:
    """Run a detect worker: validation, repeat-offender and slow-host detectors, planner, API.

    Start several processes (each with its own --web-port and --data-dir) to share the work.
    """
    from streams.shutdown import block_signals

    block_signals()  # before the worker's imports start any thread (see block_signals)
    from streams.worker import run_worker

    run_worker(settings_of(ctx), policy_file=policy, web_port=web_port, data_dir=data_dir)


@app.command("detect-policy")
def detect_policy(
    ctx: typer.Context,
    policy: Annotated[
        Path | None, typer.Argument(help=f"Policy file to check (default: {POLICY_DEFAULT}).")
    ] = None,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Validate a detection policy file and print its rules (by default the one `detect` would run)."""

    from streams.core.policy import load_policy

    loaded = load_policy(policy or settings_of(ctx).detect.policy_file)
    table = Table("rule", "classes", "scope", "count", "window", "action", "detector")
    for rule in loaded.rules:
        days = rule.window / 86_400_000
        table.add_row(
            rule.name,
            ", ".join(rule.classes),
            rule.scope,
            str(rule.count),
            f"{days:g} d",
            rule.action,
            rule.detector,
        )
    show(fmt, table)
    console = messages(fmt)
    s = loaded.slow_host
    console.print(
        f"slow host: window {s.window / 1000:g} s, z_step >= {s.z_step}, z_bus_bw <= -{s.z_bus_bw}, "
        f"at least {s.min_slowdown:.1%} worse than the peer median, {s.k} of {s.n} windows, min {s.min_peers} peers -> {s.action}"
    )
    p = loaded.planner
    console.print(f"planner: capacity {p.capacity_buffer_pct:g} %, failure buffer {p.failure_buffer_pct:g} %")


@app.command("detect-resume")
def detect_resume(
    ctx: typer.Context,
    domain: Annotated[str, typer.Argument(help="Maintenance domain whose halted train to resume.")],
    by: Annotated[
        str, typer.Option("--by", help="Who resumes it (recorded in the action's reason).")
    ] = "operator",
) -> None:
    """Resume a maintenance train the planner halted (records train_resumed on fleet.actions)."""

    from streams.core.policy import load_policy
    from streams.manual import resume_train

    settings = settings_of(ctx)
    action = resume_train(settings, load_policy(settings.detect.policy_file), domain, by=by)
    Console().print(f"train resumed in {domain}: action {action.action_id} (after {action.caused_by})")
