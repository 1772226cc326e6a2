"""``fleetpulse demo``: the whole pipeline on a real local broker, end to end, in a few minutes.

Every part runs as its own ``fleetpulse`` process (as in docker-compose), configured through
``FLEETPULSE_*`` variables; the run gets its own topic prefix, consumer groups, lake and
output folder, so demos never see each other's data. Ctrl-C stops every part cleanly.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

from ground.cli_context import settings_of

app = typer.Typer()


@contextmanager
def _interrupt_on_signals() -> Iterator[None]:
    """Ctrl-C and SIGTERM both unwind the demo, so its supervisor stops every part.

    SIGINT is installed explicitly: a shell that starts the demo in the background leaves it ignored.
    """

    def raise_interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, raise_interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _new_run_id(out: Path) -> str:
    """``demo-<time>``, or ``…-2``, ``…-3`` when a demo started in the same second took that folder."""
    stamp, n = time.strftime("demo-%Y%m%d-%H%M%S"), 1
    while True:
        run_id = stamp if n == 1 else f"{stamp}-{n}"
        try:
            (out / run_id).mkdir(parents=True)
        except FileExistsError:
            n += 1
            continue
        return run_id


@app.command()
def demo(
    ctx: typer.Context,
    preset: Annotated[
        str, typer.Option(help="Fleet preset: demo (2 × 256 hosts), small, meta-48k.")
    ] = "demo",
    history_days: Annotated[float, typer.Option(help="Fast-forwarded fleet history, sim days.")] = 30.0,
    live_seconds: Annotated[
        float, typer.Option(help="Live phase after the history, wall seconds (0: none).")
    ] = 45.0,
    speed: Annotated[float, typer.Option(help="Live phase: sim seconds per wall second.")] = 10.0,
    seed: Annotated[int, typer.Option(help="Simulator seed.")] = 7,
    out: Annotated[Path, typer.Option(help="Where runs are written (one folder per run).")] = Path("out"),
    workers: Annotated[int, typer.Option(help="Detector worker processes.")] = 1,
    open_loop: Annotated[
        bool, typer.Option(help="The simulated fleet ignores the planner's actions (closed loop by default).")
    ] = False,
    answer_every: Annotated[
        int,
        typer.Option(
            min=1,
            help="Closed loop: the history's fleet answers the planner before every Nth 6-hour tick "
            "(fewer waits for the pipeline; an action lands up to N ticks after it was decided).",
        ),
    ] = 8,
    keep_broker: Annotated[
        bool,
        typer.Option(
            help="Run on the local broker ([broker] settings, port 19092) and leave it running "
            "(default: a broker of the run's own on free ports, stopped at the end)."
        ),
    ] = False,
) -> None:
    """Run the whole pipeline end to end on a local Kafka broker and print what it found."""
    from fleetpulse.demo_broker import demo_broker
    from fleetpulse.demo_run import DemoPlan, run_demo
    from fleetpulse.supervisor import free_ports

    settings = settings_of(ctx)
    ports = free_ports(3 + workers)
    # a fixed port from the settings lets a static scrape config find the part; else a free one
    dispatch_port = settings.webhooks.metrics_port or ports[1 + workers]
    archive_port = settings.lake.metrics_port or ports[2 + workers]
    run_id = _new_run_id(out)
    plan = DemoPlan(
        run_id=run_id,
        run_dir=(out / run_id).resolve(),
        preset=preset,
        history_days=history_days,
        live_seconds=live_seconds,
        speed=speed,
        seed=seed,
        workers=workers,
        receiver_port=ports[0],
        web_ports=ports[1 : 1 + workers],
        dispatch_metrics_port=dispatch_port,
        archive_metrics_port=archive_port,
        closed_loop=not open_loop,
        answer_every=answer_every,
    )
    with (
        _interrupt_on_signals(),
        demo_broker(settings, plan.run_dir, keep=keep_broker, reporter=typer.echo) as run_on,
    ):
        try:
            summary = run_demo(run_on, plan)
        except KeyboardInterrupt:
            # the supervisor has already stopped every part (SIGTERM, grace, SIGKILL) on its way out
            typer.echo(f"interrupted: every part stopped; logs in {plan.run_dir / 'logs'}", err=True)
            raise typer.Exit(130) from None
    (plan.run_dir / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
