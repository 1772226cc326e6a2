"""``fleetpulse import``: command-line shell of the importer (merged into ``fleetpulse``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.console import Console

from ground.cli_context import settings_of
from producers.importer.coverage import render
from producers.importer.incidents import parse_start
from producers.importer.mapping import load_mapping
from producers.importer.run import plan_import, run_import
from producers.progress import StepLines, no_steps
from schemas import BoundsError
from schemas.bounds import terminal_safe

app = typer.Typer()
LARGE_FILE_BYTES = 5_000_000  # about 50,000 incidents: a few seconds of work, worth showing


@app.command("import")
def import_history(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(help="Incident file: .csv, .jsonl / .ndjson, or .json (an array).")],
    mapping: Annotated[
        Path | None,
        typer.Option(
            help="Mapping TOML: columns, times, class → cause (example: producers/importer/mapping.example.toml)."
        ),
    ] = None,
    start: Annotated[
        str | None,
        typer.Option(help="When relative times count from: ISO 8601 date or time, UTC unless zoned."),
    ] = None,
    fmt: Annotated[
        str | None, typer.Option("--format", help="csv, jsonl or json (default: from the file's suffix).")
    ] = None,
    inventory: Annotated[
        Path | None,
        typer.Option(
            help="Inventory file (CSV / JSON): every host with rack, domain, cluster, fabric, install date "
            "(fault-free hosts too); default: the mapping's [inventory] file."
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Read and map only: print the coverage, send nothing.")
    ] = False,
    progress: Annotated[
        bool | None,
        typer.Option(
            "--progress/--no-progress",
            help=f"Print each step as it goes (default: for files of {LARGE_FILE_BYTES // 1_000_000} MB or more).",
        ),
    ] = None,
) -> None:
    """Import a fleet's incident history into Kafka: detectors, lake and analytics see it like live data."""
    console = Console(soft_wrap=True)
    if fmt not in (None, "csv", "jsonl", "json"):
        raise typer.BadParameter(f"--format {fmt!r}: use csv, jsonl or json")
    chosen: Literal["csv", "jsonl", "json"] | None = fmt  # type: ignore[assignment]
    try:
        start_ms = parse_start(start) if start else None
    except BoundsError as exc:
        raise typer.BadParameter(str(exc)) from None
    except (ValueError, OverflowError):
        raise typer.BadParameter(
            f"--start {terminal_safe(repr(start))} is not an ISO 8601 date or time"
        ) from None
    mapped = load_mapping(mapping)
    large = path.is_file() and path.stat().st_size >= LARGE_FILE_BYTES
    steps = StepLines(lambda line: console.print(line, markup=False, highlight=False))
    shown = steps if (progress if progress is not None else large) else no_steps
    if dry_run:
        plan = plan_import(path, mapped, start_ms=start_ms, fmt=chosen, inventory=inventory, progress=shown)
        summary = plan.summary
    else:
        summary = run_import(
            settings_of(ctx), path, mapped, start_ms=start_ms, fmt=chosen, inventory=inventory, progress=shown
        )
    for line in render(summary, source=str(path), dry_run=dry_run):
        console.print(
            terminal_safe(line), markup=False, highlight=False
        )  # a file's text never drives the terminal
