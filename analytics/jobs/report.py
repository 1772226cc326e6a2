"""``fleetpulse report``: every job over a lake, their plots, the quarantine and (optionally) truth checks.

Writes ``report.html`` (self-contained: PNGs embedded) and ``summary.md`` (PNGs linked) into the
output folder, next to each job's tables (Parquet + CSV) and ``summary.json``.
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import polars as pl
from rich.progress import Progress

from analytics.jobs.campaign_job import summary_lines as campaign_lines
from analytics.jobs.closed_loop import ClosedLoop, closed_loop
from analytics.jobs.coverage import coverage_text
from analytics.jobs.errors import JobError
from analytics.jobs.plots import plot_job
from analytics.jobs.render import HTML_HEAD, fmt, html_image, html_table, markdown_table
from analytics.jobs.report_header import Header, header, human_times, with_verdict
from analytics.jobs.result import JobResult, write_result
from analytics.jobs.runner import JOBS, run_job
from analytics.jobs.source import read_manifest
from analytics.jobs.truth import truth_checks
from analytics.lake import Lake

# Which tables each job shows in the report (the rest are in its folder).
SHOWN: dict[str, tuple[str, ...]] = {
    "early-life": ("early_life_fit", "power_law_fit"),
    "fabric": (
        "percentiles",
        "comparisons",
        "link_rates",
        "slow_incidence",
        "slow_incidence_findings",
        "repair",
    ),
    "offenders": ("share", "offenders"),
    "maintenance-domain": ("sensitivity",),
    "interruptions": ("root_causes", "mttf_by_size", "projected_mttf"),
    "incidents": ("causes", "unclassified_classes", "time_to_repair", "time_to_repair_by_operation"),
    "campaigns": ("campaigns", "halts"),
}


class Report(NamedTuple):
    html: Path
    markdown: Path
    results: dict[str, JobResult]
    skipped: dict[str, str]
    quarantine: pl.DataFrame
    truth: pl.DataFrame | None
    closed_loop: ClosedLoop | None  # what the simulated fleet did in answer to the planner (closed-loop runs)


def quarantine_table(lake: str | Path) -> pl.DataFrame:
    """The quality gate's quarantined batches (``Lake.quarantine``), one row each."""

    rows = [e._asdict() for e in Lake(lake).quarantine()]
    for row in rows:
        row["failed_expectations"] = ", ".join(row["failed_expectations"])
        del row["report"]
    return pl.DataFrame(rows)


def _summary_lines(result: JobResult) -> list[str]:
    s = result.summary
    if result.name == "early-life":
        mixed = [
            f"early-life shape β for {m} (with a constant background): "
            + (
                f"{f['shape']:.3f} [{f['shape_lo']:.3f}, {f['shape_hi']:.3f}], {f['early_share']:.0%} of "
                f"{f['events']} failures early-life"
                if f["decided"]
                else f"insufficient data: {f['reason']}"
            )
            for m, f in s.get("early_life_fits", {}).items()
        ]
        return mixed + [
            f"power-law shape β for {m} (no background term): {f['shape']:.3f} "
            f"[{f['shape_lo']:.3f}, {f['shape_hi']:.3f}] from {f['events']} failures"
            for m, f in s["fits"].items()
        ]
    if result.name == "maintenance-domain":
        m, o = s["model"], s["optimum"]
        return [
            f"optimal domain: {o['size']} hosts, capacity lost {o['cost_hosts']:.1f} hosts "
            f"({o['cost_fraction']:.1%} of {m['hosts']})",
            f"inputs: λ={m['failure_rate']:.3g}/host-h, R={m['repair_hours']:.3g} h, J={m['job_hosts']} hosts, "
            f"ρ={m['restart_hours']} h, T={m['cycle_hours']} h",
            *(f"{k}: {v}" for k, v in s.get("inputs", {}).items()),
        ]
    if result.name == "interruptions":
        return [
            f"{s['interruptions']} interruptions, {s['rate_per_gpu_day']:.3g} per GPU-day; "
            f"MTTF vs job size: {s['mttf_vs_size']}"
        ]
    if result.name == "incidents":
        lines = [f"{s['outages']} outages, {s['closed_outages']} closed ({s['closed_by_source'] or 'none'})"]
        if s["incidents"]:
            lines.insert(
                0,
                f"{s['classified']} of {s['incidents']} incidents classified; "
                f"{s['unclassified_source_classes']} source classes had no mapping",
            )
        return lines
    if result.name == "campaigns":
        return campaign_lines(s)
    if result.name == "offenders":
        return [
            f"{s['repeat_offenders']} repeat offenders (≥ {s['min_events']} faults of one class); "
            f"host-level share of hardware faults: {fmt(s['host_share_of_faults']) or 'none (no fault with a hardware signal)'}"
        ]
    return [
        f"{c['metric']}: {c['group_b']} − {c['group_a']} = {c['diff']:+.4g} "
        f"[{c['diff_lo']:+.4g}, {c['diff_hi']:+.4g}], Mann–Whitney p={c['p_value']:.2g}"
        for c in s.get("comparisons", {}).values()
    ]


def _coverage_line(result: JobResult, table: str, template: str, escape: Callable[[str], str] = str) -> str:
    """The table's coverage sentence; a table whose job gave none says so rather than looking complete."""
    text = coverage_text(result.summary, table)
    return template.format(escape(f"coverage: {text}" if text else "coverage: not measured for this table"))


def build_report(
    lake: str | Path,
    out: str | Path,
    truth: str | Path | None = None,
    jobs: tuple[str, ...] = tuple(JOBS),
    show_progress: bool = True,
    now: Callable[[], float] = time.time,
) -> Report:
    """Run ``jobs`` over ``lake`` and write the report into ``out`` (``now``: its generation time)."""

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, JobResult] = {}
    skipped: dict[str, str] = {}
    figures: dict[str, list[Path]] = {}
    with Progress(disable=not show_progress, transient=True) as progress:
        task = progress.add_task("analytics jobs", total=len(jobs) + 1)
        for name in jobs:
            progress.update(task, description=f"job {name}")
            try:
                result = run_job(name, lake, truth)
            except JobError as exc:
                skipped[name] = str(exc)
            else:
                results[name] = result
                folder = write_result(result, out)
                figures[name] = plot_job(result, folder)
            progress.advance(task)
        progress.update(task, description="quarantine and truth")
        quarantine = quarantine_table(lake)
        checks = truth_checks(results, truth) if truth is not None else None
        progress.advance(task)
    head = header(lake, now)
    shown = with_verdict(checks) if checks is not None else None
    loop = closed_loop(read_manifest(truth))
    md = _markdown(head, out, results, skipped, figures, quarantine, shown, loop)
    page = _html(head, results, skipped, figures, quarantine, shown, loop)
    (out / "summary.md").write_text(md)
    (out / "report.html").write_text(page)
    return Report(out / "report.html", out / "summary.md", results, skipped, quarantine, checks, loop)


def _loop_tables(loop: ClosedLoop) -> list[tuple[str, pl.DataFrame]]:
    return [
        ("GPU-hours out of service by cause", loop.by_cause),
        ("GPU-hours out of service by maintenance domain", loop.by_domain),
        ("hosts cured, retired or still out", loop.hosts),
        *(
            [
                ("GPU-hours lost to training by cause", loop.lost),
                ("GPU-hours lost to training by maintenance domain", loop.lost_by_domain),
                ("ETTR per job", loop.ettr),
            ]
            if len(loop.ettr)
            else []
        ),
    ]


def _markdown(
    head: Header,
    out: Path,
    results: dict,
    skipped: dict,
    figures: dict,
    quarantine: pl.DataFrame,
    checks: pl.DataFrame | None,
    loop: ClosedLoop | None = None,
) -> str:
    parts = ["# fleetpulse analytics report\n", *(f"{line}  " for line in head.lines()), ""]
    if checks is not None:
        parts += ["## Ground-truth checks\n", markdown_table(checks, 100)]
    if loop is not None:
        parts += [
            "## Closed loop: the fleet's answer to the planner\n",
            *(f"- {line}" for line in loop.lines),
            "",
        ]
        parts += [part for title, t in _loop_tables(loop) for part in (f"**{title}**\n", markdown_table(t))]
    for name, result in results.items():
        parts.append(f"## {name}\n")
        parts += [f"- {line}" for line in _summary_lines(result)] + [""]
        parts += [f"> note: {n}\n" for n in result.notes]
        for fig in figures[name]:
            parts.append(f"![{fig.stem}]({fig.relative_to(out).as_posix()})\n")
        for t in SHOWN[name]:
            if t in result.tables:
                table = human_times(result.tables[t])
                parts += [f"**{t}**\n", _coverage_line(result, t, "_{}_\n"), markdown_table(table)]
    for name, why in skipped.items():
        parts.append(f"## {name}\n\n_skipped: {why}_\n")
    parts += [
        "## Quality gate: quarantined batches\n",
        markdown_table(quarantine) if quarantine.height else "_none_\n",
    ]
    return "\n".join(parts)


def _html(
    head: Header,
    results: dict,
    skipped: dict,
    figures: dict,
    quarantine: pl.DataFrame,
    checks: pl.DataFrame | None,
    loop: ClosedLoop | None = None,
) -> str:
    parts = [
        HTML_HEAD.format(title="fleetpulse analytics"),
        "<h1>fleetpulse analytics report</h1>",
        "<p>" + "<br>".join(html.escape(line) for line in head.lines()) + "</p>",
    ]
    if checks is not None:
        parts += ["<h2>Ground-truth checks</h2>", html_table(checks, 100)]
    if loop is not None:
        parts += [
            "<h2>Closed loop: the fleet's answer to the planner</h2><ul>",
            *(f"<li>{html.escape(line)}</li>" for line in loop.lines),
            "</ul>",
        ]
        parts += [part for title, t in _loop_tables(loop) for part in (f"<h3>{title}</h3>", html_table(t))]
    for name, result in results.items():
        parts.append(f"<h2>{html.escape(name)}</h2><ul>")
        parts += [f"<li>{html.escape(line)}</li>" for line in _summary_lines(result)] + ["</ul>"]
        parts += [f'<p class="note">note: {html.escape(n)}</p>' for n in result.notes]
        parts += [html_image(f) for f in figures[name]]
        for t in SHOWN[name]:
            if t in result.tables:
                line = _coverage_line(result, t, '<p class="coverage">{}</p>', html.escape)
                parts += [f"<h3>{t}</h3>", line, html_table(human_times(result.tables[t]))]
    for name, why in skipped.items():
        parts.append(f"<h2>{html.escape(name)}</h2><p class='note'>skipped: {html.escape(why)}</p>")
    parts += [
        "<h2>Quality gate: quarantined batches</h2>",
        html_table(quarantine) if quarantine.height else "<p>none</p>",
        "</body></html>",
    ]
    return "\n".join(parts)
