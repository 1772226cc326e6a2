"""``fleetpulse backtest``: replay a lake's history through a (changed) policy, offline, and report the difference.

The command imports what it runs when it runs (Polars, the detectors), so ``fleetpulse --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ground.cli_context import settings_of
from ground.tables import FormatOpt, OutputFormat, messages, show

app = typer.Typer()


@app.command()
def backtest(
    ctx: typer.Context,
    lake: Annotated[Path | None, typer.Option(help="Lake root (default lake.path).")] = None,
    policy: Annotated[
        Path | None,
        typer.Option(
            help="Policy to replay (default: settings detect.policy_file, else the packaged policy)."
        ),
    ] = None,
    from_: Annotated[
        str | None,
        typer.Option("--from", help="Event-time start, ISO 8601 (UTC unless it says) or epoch ms."),
    ] = None,
    to: Annotated[str | None, typer.Option(help="Event-time end (exclusive), like --from.")] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="KEY=V1[,V2…]: policy key to change (dotted, e.g. slow_host.min_slowdown=0.01,0.02,0.03 or "
            "rules.dram_uce_repeat_gpu.count=2,3); repeat for a grid.",
        ),
    ] = None,
    truth: Annotated[
        list[Path] | None,
        typer.Option(help="Simulator truth directory (--truth-out): precision, recall, time to detect."),
    ] = None,
    out: Annotated[Path, typer.Option(help="Folder for report.html, report.md and the tables.")] = Path(
        "backtest-report"
    ),
    tick: Annotated[str, typer.Option(help="Event time between two planner ticks (e.g. 60s, 5m).")] = "60s",
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """What a policy would have done over the lake's history: findings, actions, capacity, against the live run."""
    from analytics.lake.reader import open_lake
    from fleetpulse.backtest.events import Period, read_history
    from fleetpulse.backtest.report import write_report
    from fleetpulse.backtest.run import run_backtest
    from fleetpulse.backtest.summary import summary_table
    from fleetpulse.backtest.sweep import parse_setting, read_policy_data, variants
    from fleetpulse.backtest.when import parse_time
    from fleetpulse.evaluation.sources import load_truth
    from streams.core.policy_fields import parse_duration_ms

    settings = settings_of(ctx)
    policy_file = policy or settings.detect.policy_file
    lake_path = lake or Path(settings.lake.path)
    grid = variants(read_policy_data(policy_file), [parse_setting(s) for s in set_ or []])
    period = Period(parse_time(from_, "--from"), parse_time(to, "--to"))
    truth_frames = load_truth(truth) if truth else None
    console = messages(fmt)
    with console.status(f"reading {lake_path}"):
        history = read_history(open_lake(lake_path), period)
    with console.status(f"replaying {len(history.events):,} records through {len(grid)} policy variant(s)"):
        results = run_backtest(
            history,
            grid,
            truth_frames,
            tick_ms=parse_duration_ms(tick),
            plan_order=settings.detect.plan_order,
        )
    params = {
        "lake": str(lake_path),
        "policy": str(policy_file or "packaged policy"),
        "from": from_ or "start",
        "to": to or "end",
        "tick": tick,
        "plan order": settings.detect.plan_order,
        "records": len(history.events),
    }
    html_path, md_path = write_report(results, out, params)
    show(fmt, summary_table(results), console=console)
    console.print(f"report written to {html_path} and {md_path}")
