"""Command-line entry points of the producers package (merged into ``fleetpulse``)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from ground.cli_context import settings_of
from ground.packaged_policy import parse_duration_ms
from producers.agent.cli import agent as agent_command

app = typer.Typer()
app.command("agent")(agent_command)


class ModeOption(StrEnum):
    fast_forward = "fast-forward"
    live = "live"


class SinkOption(StrEnum):
    kafka = "kafka"
    parquet = "parquet"
    null = "null"


# Options shared by ``simulate`` and the closed-loop ``loop`` (fleetpulse.twin.live_cli).
DaysOption = Annotated[float, typer.Option(help="fast-forward: sim days to generate.")]
DurationOption = Annotated[str, typer.Option(help="live: wall-clock run time, e.g. 60s, 5m.")]
SpeedOption = Annotated[float, typer.Option(help="live: sim seconds per wall second.")]
TruthOutOption = Annotated[
    Path | None, typer.Option("--truth-out", help="Write ground truth (manifest, faults, hosts) here.")
]
ContinueOption = Annotated[
    Path | None,
    typer.Option(
        "--continue-from", help="Truth dir of a finished run: continue its fleet, times and agent_seq."
    ),
]


def parse_duration(text: str) -> float:
    """``90``, ``60s``, ``5m``, ``2h``, ``1d``, ``250ms`` → seconds, by the policy's one duration parser."""
    try:
        return parse_duration_ms(text) / 1000
    except ValueError as exc:
        raise typer.BadParameter(f"{text!r} is not a duration like 60s, 5m, 2h") from exc


@app.command()
def simulate(
    ctx: typer.Context,
    preset: Annotated[
        str | None, typer.Option(help="Fleet preset: meta-48k, demo, small (default from settings).")
    ] = None,
    fleet_config: Annotated[
        Path | None, typer.Option("--fleet-config", help="Fleet TOML file (overrides --preset).")
    ] = None,
    mode: Annotated[
        ModeOption, typer.Option(help="live: paced to the wall clock; fast-forward: as fast as possible.")
    ] = ModeOption.fast_forward,
    days: DaysOption = 1.0,
    duration: DurationOption = "60s",
    speed: SpeedOption = 1.0,
    seed: Annotated[
        int | None, typer.Option(help="Random seed (same seed + config = same events and truth).")
    ] = None,
    interval: Annotated[
        int | None, typer.Option(help="HostSampled interval, s (live 10, fast-forward from settings).")
    ] = None,
    start: Annotated[
        str | None,
        typer.Option(
            help="Event-time start, ISO 8601 UTC (live: now; at --speed > 1 early enough to end now)."
        ),
    ] = None,
    sink: Annotated[SinkOption, typer.Option(help="Where events go.")] = SinkOption.kafka,
    out: Annotated[
        Path | None,
        typer.Option(help="parquet sink: lake folder of Delta tables (default settings.lake.path)."),
    ] = None,
    truth_out: TruthOutOption = None,
    continue_from: ContinueOption = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
) -> None:
    """Simulate a GPU fleet's telemetry and failures into Kafka, the Delta lake or nowhere."""

    from producers.runner import SimulationRequest, parse_start, run_simulation

    settings = settings_of(ctx)
    request = SimulationRequest(
        mode=mode.value,
        days=days,
        duration_s=parse_duration(duration),
        speed=speed,
        preset=preset,
        fleet_config=fleet_config,
        seed=seed,
        start_ts=parse_start(start) if start else None,
        interval_s=interval,
        sink=sink.value,
        out=out,
        truth_out=truth_out,
        continue_from=continue_from,
        progress=progress,
    )
    result = run_simulation(settings, request)
    console = Console()
    state = "interrupted" if result.interrupted else "done"
    console.print(
        f"[bold]{state}[/]: {result.total:,} events in {result.elapsed_s:.1f} s "
        f"({result.events_per_s:,.0f} ev/s), run {result.run_id}, {result.ticks} ticks of {result.interval_s} s"
    )
    if request.mode == "live" and result.elapsed_s > 0:
        console.print(
            f"  paced at {speed:g}x: idle {100 * result.idle_s / result.elapsed_s:.0f} % of the wall time, "
            f"worst lag {result.max_lag_s:.2f} s"
        )
    for topic, n in result.counts_by_topic.items():
        console.print(f"  {topic:<24} {n:>12,}")
    if result.truth_dir:
        console.print(f"  truth → {result.truth_dir}")
