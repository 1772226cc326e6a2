"""``fleetpulse loop``: simulate the fleet into Kafka closed loop, answering the planner's actions.

The same run as ``fleetpulse simulate`` (same fleet, seed, faults and truth), except that the fleet
reads ``fleet.actions`` before each tick: drained hosts send no fault, repairs cure with the twin's
probabilities, returned hosts come back, retired hosts never do. Fast-forward waits for the detect
worker before each tick; live mode keeps the wall-clock pace and reads what has been decided.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console

from fleetpulse.twin.errors import TwinError
from fleetpulse.twin.live import BrokerLoop, Lockstep
from fleetpulse.twin.settings import parse_twin_sets, twin_settings
from ground.cli_context import settings_of
from producers.cli import (
    ContinueOption,
    DaysOption,
    DurationOption,
    ModeOption,
    SpeedOption,
    TruthOutOption,
    parse_duration,
)
from producers.errors import SimulatorError
from producers.runner import SimulationRequest, run_simulation

app = typer.Typer()


@app.command()
def loop(
    ctx: typer.Context,
    preset: Annotated[str | None, typer.Option(help="Fleet preset: meta-48k, demo, small.")] = None,
    mode: Annotated[
        ModeOption, typer.Option(help="fast-forward: in lockstep with the pipeline; live: at the wall clock.")
    ] = ModeOption.fast_forward,
    days: DaysOption = 1.0,
    duration: DurationOption = "60s",
    speed: SpeedOption = 1.0,
    seed: Annotated[int | None, typer.Option(help="Random seed (fleet, faults and repair outcomes).")] = None,
    truth_out: TruthOutOption = None,
    continue_from: ContinueOption = None,
    twin_set: Annotated[
        list[str] | None,
        typer.Option(
            "--twin-set", help="KEY=VALUE of the twin's settings (cure probabilities…), TOML value."
        ),
    ] = None,
    wait_s: Annotated[
        float, typer.Option(help="fast-forward: longest wait for the detect worker before a tick, s.")
    ] = 60.0,
    answer_every: Annotated[
        int,
        typer.Option(
            min=1,
            help="fast-forward: the fleet answers before every Nth tick only (fewer waits for the pipeline; "
            "an action then takes effect up to N ticks after the tick it was decided in).",
        ),
    ] = 1,
) -> None:
    """Simulate the fleet into Kafka closed loop: it answers the planner's drains, repairs, returns, retirements."""
    settings = settings_of(ctx)
    live = mode == ModeOption.live
    try:
        twin = twin_settings(parse_twin_sets(twin_set or []))
    except TwinError as exc:
        raise typer.BadParameter(str(exc)) from None
    request = SimulationRequest(
        mode=mode.value,
        days=days,
        duration_s=parse_duration(duration),
        speed=speed,
        preset=preset,
        seed=seed,
        truth_out=truth_out,
        continue_from=continue_from,
    )
    lockstep = Lockstep(timeout_s=None if live else wait_s, every=1 if live else answer_every)
    run_seed = settings.simulator.seed if seed is None else seed
    answer = BrokerLoop(settings, twin, run_seed, lockstep)
    try:
        result = run_simulation(settings, request, answer=answer, stop=lockstep.stop)
    except (SimulatorError, TwinError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    finally:
        answer.close()
    loop_report = result.manifest.get("closed_loop", {})
    Console().print(
        f"[bold]{'interrupted' if result.interrupted else 'done'}[/] closed loop: {result.total:,} events, "
        f"{result.ticks} ticks in {result.elapsed_s:.1f} s (waited {lockstep.waited_s:.1f} s for the pipeline); "
        + json.dumps({k: v for k, v in loop_report.items() if not isinstance(v, dict | list)})
    )
    jobs = loop_report.get("jobs") or {}
    if jobs:
        Console().print(
            f"training: {jobs['jobs']} job(s), {jobs['interruptions']} interrupted by a fault; "
            + json.dumps({k: jobs[k] for k in ("ettr_mean", "ettr_gpu_weighted", "ettr_min", "goodput")})
            + "; GPU-hours lost "
            + json.dumps({k: v for k, v in jobs["lost_gpu_h"].items() if v})
        )
