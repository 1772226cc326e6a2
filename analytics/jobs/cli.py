"""Command-line entry points of ``analytics.jobs`` (merged into ``fleetpulse``): ``analyze`` and ``report``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import polars as pl
import typer
from rich.markup import escape
from rich.table import Table

from ground.cli_context import settings_of
from ground.tables import FormatOpt, OutputFormat, Sheet, messages, show

app = typer.Typer()

JOB_NAMES = (
    "early-life",
    "fabric",
    "offenders",
    "maintenance-domain",
    "interruptions",
    "incidents",
    "campaigns",
)

# A str, not a Path, so that a URI reaches _lake intact and is refused by name.
LakeOpt = Annotated[
    str | None,
    typer.Option("--lake", help="Parquet lake root, a local folder (default: settings lake.path)."),
]
TruthOpt = Annotated[
    Path | None,
    typer.Option("--truth", help="Simulator truth dir (--truth-out): its manifest sets the window."),
]


def result_table(name: str, frame: pl.DataFrame, columns: int = 8, rows: int = 15) -> Table:
    """A job's table for the terminal; every cell escaped (a host id may contain ``[/]``, rich markup)."""
    from analytics.jobs.render import fmt_cell

    frame = frame.select(frame.columns[:columns])
    view = Table(title=escape(name), show_lines=False)
    for col in frame.columns:
        view.add_column(escape(col))
    for row in frame.head(rows).iter_rows():
        view.add_row(*(escape(fmt_cell(c, v)) for c, v in zip(frame.columns, row, strict=True)))
    return view


def frame_sheet(name: str, frame: pl.DataFrame) -> Sheet:
    """A job's whole table (every row and column, raw values) for ``--format json|csv``."""
    return Sheet.of(name, frame.columns, frame.rows())


def _params(pairs: list[str]) -> dict[str, Any]:
    from analytics.jobs.errors import JobError

    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep:
            raise JobError(f"--set expects KEY=VALUE, got {pair!r}")
        value: Any = raw
        for cast in (int, float):
            try:
                value = cast(raw)
                break
            except ValueError:
                continue
        out[key.strip().replace("-", "_")] = None if raw.lower() == "none" else value
    return out


def _lake(ctx: typer.Context, lake: str | None) -> Path:
    """The local lake folder the jobs read; a URI lake is refused as such, not as a missing folder."""
    from analytics.jobs.errors import JobError
    from analytics.jobs.source import local_lake
    from analytics.lake.reader import open_lake

    path = local_lake(lake or settings_of(ctx).lake.path)
    if not path.is_dir():
        raise JobError(f"lake {path} does not exist (pass --lake or set FLEETPULSE_LAKE__PATH)")
    open_lake(path)  # a folder that holds no lake is as wrong as none
    return path


@app.command()
def analyze(
    ctx: typer.Context,
    job: Annotated[str, typer.Argument(help=f"One of: {', '.join(JOB_NAMES)}.")],
    lake: LakeOpt = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write tables, summary.json and plots here.")
    ] = None,
    truth: TruthOpt = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Job parameter KEY=VALUE, e.g. --set min_events=2.")
    ] = None,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Run one analytics job over the lake and print its headline numbers."""
    import inspect

    from analytics.jobs.coverage import coverage_text
    from analytics.jobs.errors import JobError, UnknownJobError
    from analytics.jobs.plots import plot_job
    from analytics.jobs.report import SHOWN, _summary_lines
    from analytics.jobs.result import write_result
    from analytics.jobs.runner import JOBS, run_job

    params = _params(set_ or [])
    if job in JOBS:
        allowed = set(inspect.signature(JOBS[job]).parameters) - {"lake", "truth"}
        unknown = set(params) - allowed
        if unknown:
            raise JobError(f"job {job!r} has no parameter {sorted(unknown)}; it takes {sorted(allowed)}")
    console = messages(fmt)
    folder = _lake(ctx, lake)
    try:
        with console.status(f"running {job} ..."):
            result = run_job(job, folder, truth, **params)
    except UnknownJobError:
        raise
    except JobError as exc:  # what the report calls skipped (no such table, too little data): not a failure
        console.print(f"skipped: {escape(str(exc))}", soft_wrap=True)
        return
    for line in _summary_lines(result):
        console.print(f"• {escape(line)}")
    for note in result.notes:
        console.print(f"[yellow]note:[/] {escape(note)}")
    if fmt is not OutputFormat.table:
        show(fmt, *(frame_sheet(n, result.tables[n]) for n in SHOWN[job] if n in result.tables))
    for name in SHOWN[job] if fmt is OutputFormat.table else ():
        table = result.tables.get(name)
        if name == "comparisons":  # already printed as the summary lines above
            continue
        if table is not None and table.height:
            console.print(result_table(name, table))
            console.print(
                f"coverage: {coverage_text(result.summary, name) or 'not measured'}", soft_wrap=True
            )
    if out is not None:
        folder = write_result(result, out)
        plots = plot_job(result, folder)
        console.print(f"wrote {len(result.tables)} tables and {len(plots)} plots to {folder}")


@app.command()
def report(
    ctx: typer.Context,
    out: Annotated[Path, typer.Option("--out", help="Folder for report.html, summary.md and job outputs.")],
    lake: LakeOpt = None,
    truth: TruthOpt = None,
    jobs: Annotated[str, typer.Option("--jobs", help="Comma-separated subset of jobs.")] = ",".join(
        JOB_NAMES
    ),
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Run every job and write report.html (self-contained) and summary.md with plots.

    ``--format json|csv`` also prints the truth checks and the skipped jobs on stdout.
    """

    from analytics.jobs.errors import UnknownJobError
    from analytics.jobs.report import build_report

    chosen = tuple(j.strip() for j in jobs.split(",") if j.strip())
    for name in chosen:
        if name not in JOB_NAMES:
            raise UnknownJobError(name, JOB_NAMES)
    console = messages(fmt)
    rep = build_report(
        _lake(ctx, lake), out, truth, chosen, show_progress=fmt is OutputFormat.table
    )  # stdout: the tables
    for name, why in rep.skipped.items():
        console.print(f"[yellow]skipped {escape(name)}:[/] {escape(why)}")
    if rep.truth is not None:
        ok = rep.truth["ok"]
        undecided = (
            f", {ok.null_count()} without a verdict (insufficient data, or a figure with no pass mark)"
            if ok.null_count()
            else ""
        )
        console.print(f"truth checks: {int(ok.sum())}/{rep.truth.height} passed{undecided}")
    console.print(f"wrote {rep.html} and {rep.markdown}")
    if fmt is not OutputFormat.table:
        skipped = Sheet.of("skipped", ["job", "why"], sorted(rep.skipped.items()))
        show(fmt, *([frame_sheet("truth checks", rep.truth)] if rep.truth is not None else []), skipped)
