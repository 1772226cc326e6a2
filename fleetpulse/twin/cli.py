"""``fleetpulse twin``: run policy variants closed loop on a simulated fleet and judge them by goodput.

``fleetpulse --help`` never imports this module (``fleetpulse.commands``), so it imports at the top.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from fleetpulse.backtest.sweep import parse_setting, read_policy_data, variants
from fleetpulse.twin.settings import parse_twin_sets, twin_settings
from fleetpulse.twin.sweep import run_sweep
from fleetpulse.twin.table import sweep_tables
from ground.cli_context import settings_of
from ground.tables import FormatOpt, OutputFormat, Sheet, messages, show
from producers.config import load_fleet_config
from producers.runner import parse_start

app = typer.Typer()


@app.command()
def twin(
    ctx: typer.Context,
    preset: Annotated[
        str, typer.Option(help="Fleet preset (producers/presets) or see --fleet-config.")
    ] = "demo",
    fleet_config: Annotated[Path | None, typer.Option(help="Fleet config TOML (wins over --preset).")] = None,
    policy: Annotated[
        Path | None,
        typer.Option(help="Policy (default: settings detect.policy_file, else the packaged one)."),
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set", help="KEY=V1[,V2…] of the policy, as in `fleetpulse backtest` (repeat for a grid)."
        ),
    ] = None,
    twin_set: Annotated[
        list[str] | None,
        typer.Option(
            "--twin-set",
            help="KEY=VALUE of the twin's own settings (TOML value), e.g. spare_pct=5 or "
            "cure={rma={dram_uce=0.5}}; see fleetpulse/twin/settings.py.",
        ),
    ] = None,
    seeds: Annotated[int, typer.Option(min=1, help="Replications: seeds seed, seed+1, …")] = 3,
    seed: Annotated[int, typer.Option(help="First seed.")] = 1,
    days: Annotated[float, typer.Option(min=0.01, help="Simulated days.")] = 30.0,
    start: Annotated[str, typer.Option(help="Event-time start, ISO 8601.")] = "2026-01-01T00:00:00Z",
    out: Annotated[Path | None, typer.Option(help="Write every run's summary here as JSON.")] = None,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Closed loop: the simulated fleet answers the real detectors' and planner's actions; ETTR, goodput,
    GPU-hours lost by cause, pages and precision/recall per policy variant, with 95 % intervals over seeds."""
    settings = settings_of(ctx)
    grid = variants(
        read_policy_data(policy or settings.detect.policy_file), [parse_setting(s) for s in set_ or []]
    )
    config = load_fleet_config(preset, fleet_config)
    twin_cfg = twin_settings(parse_twin_sets(twin_set or []))
    console = messages(fmt)
    with console.status("running") as status:
        results = run_sweep(
            config,
            grid,
            twin_cfg,
            seeds=range(seed, seed + seeds),
            start_ts=parse_start(start),
            days=days,
            progress=lambda what: status.update(f"closed loop: {what}"),
        )
    title = f"{config.name}, {days:g} days, {seeds} seed(s) from {seed}"
    if fmt is OutputFormat.table:
        show(fmt, *sweep_tables(results, title), console=console)
    else:  # one row per variant of raw numbers: each figure's mean and half width, GPU-hours lost per cause
        show(fmt, Sheet.of_records(title, [r.row() for r in results]))
    if out is not None:
        runs = [{"variant": dict(r.variant.values), "runs": r.runs} for r in results]
        out.write_text(json.dumps(runs, indent=1, sort_keys=True) + "\n")
        console.print(f"runs written to {out}")
