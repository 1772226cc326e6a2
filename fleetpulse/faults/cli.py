"""``fleetpulse faults run``: the fault-injection scenarios on a broker of their own, the table, the doc.

Mount with ``app.add_typer(fleetpulse.faults.cli.app, name="faults")`` in ``fleetpulse/cli.py``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from ground.cli_context import settings_of
from ground.tables import FormatOpt, OutputFormat, messages

app = typer.Typer(
    help="Fault injection: kill detect workers, restart or stop the broker, take the webhook receiver down or slow it, fill the disk, feed poison.",
    no_args_is_help=True,
)


@app.callback()
def faults() -> None:
    """Fault injection: kill detect workers, restart or stop the broker, take the webhook receiver down or slow it, fill the disk, feed poison."""


@app.command("run")
def run(
    ctx: typer.Context,
    scenario: Annotated[
        list[str] | None,
        typer.Option(
            "--scenario",
            "-s",
            help="worker-kill, broker-restart, receiver-down, poison, broker-outage, receiver-slow, disk-full (repeatable; default all).",
        ),
    ] = None,
    write: Annotated[
        Path | None,
        typer.Option(help="Update this Markdown file's results table (e.g. docs/RELIABILITY.md)."),
    ] = None,
    out: Annotated[
        Path, typer.Option(help="Run folder root: broker data, worker logs, truth, receiver files.")
    ] = Path("out/faults"),
    preset: Annotated[str, typer.Option(help="Simulated fleet preset.")] = "small",
    days: Annotated[float, typer.Option(help="Simulated fleet history, days.")] = 14.0,
    seed: Annotated[int, typer.Option(help="Simulator and fuzzer seed.")] = 7,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Run fault scenarios against a local Kafka broker started for this run; print (and write) the results.

    Exit code 1 when a goal is missed (the table still prints and is written).
    """

    from fleetpulse.faults.context import FaultContext
    from fleetpulse.faults.errors import ScenarioError
    from fleetpulse.faults.report import print_table, write_reliability
    from fleetpulse.faults.runner import check_names, own_broker, run_scenario

    names = check_names(scenario or [])
    settings = settings_of(ctx)
    console = messages(fmt)
    run_id = time.strftime("faults-%Y%m%d-%H%M%S")
    run_dir = (out / run_id).resolve()
    command = (
        "fleetpulse " + " ".join(sys.argv[1:]) if sys.argv[1:2] == ["faults"] else "fleetpulse faults run"
    )
    results = []
    failed: list[str] = []
    with (
        console.status("starting a Kafka broker for the fault run …"),
        own_broker(settings, run_dir / "broker") as broker,
    ):
        context = FaultContext(
            base=settings,
            broker=broker,
            out_dir=run_dir,
            run_id=run_id,
            command=command,
            preset=preset,
            days=days,
            seed=seed,
            say=lambda m: console.log(m),
        )
        for name in names:
            try:
                with console.status(f"scenario [bold]{name}[/] …"):
                    result = run_scenario(context, name)
            except ScenarioError as exc:  # the run itself failed: no row, the other scenarios still run
                console.print(f"[red]✗ {name} could not run:[/] {exc}")
                failed.append(name)
                continue
            results.append(result)
            console.print(f"{'[green]✓' if result.met else '[red]✗'}[/] {name} ({result.duration_s:.0f} s)")
    print_table(results, console, fmt)
    if write is not None:
        write_reliability(write, results)
        console.print(f"written to {write}")
    console.print(f"run folder: {run_dir}")
    if failed or not all(r.met for r in results):
        raise typer.Exit(1)
