"""How ``fleetpulse score`` prints a report: one table row per detector, then per-detector notes and pages."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.table import Table

from fleetpulse.evaluation.report import DetectorScore, PageScore, ScoreReport
from ground.tables import OutputFormat, show

if TYPE_CHECKING:
    from rich.console import Console


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    sign = "-" if seconds < 0 else ""
    s = abs(seconds)
    if s < 120:
        return f"{sign}{s:.0f} s"
    if s < 7200:
        return f"{sign}{s / 60:.1f} min"
    if s < 2 * 86400:
        return f"{sign}{s / 3600:.1f} h"
    return f"{sign}{s / 86400:.1f} d"


LIVE_TITLE = "The live segment alone (live window)"


def render(
    report: ScoreReport,
    console: Console,
    title: str = "Detection quality vs ground truth (hosts)",
    fmt: OutputFormat = OutputFormat.table,
) -> None:
    """One table row per detector, then the per-kind breakdown; the live segment of a run apart.
    ``--format json|csv``: the tables alone (the whole report: ``score --json``)."""
    if fmt is not OutputFormat.table:
        live = [score_table(report.live, LIVE_TITLE)] if report.live is not None else []
        show(fmt, score_table(report, title), *live)
        return
    console.print(score_table(report, title))
    for s in report.detectors.values():
        console.print(f"[bold]{s.detector}[/]: {_notes(s)}")
    if report.pages is not None:
        console.print(f"[bold]pages[/]: {_pages(report.pages)}")
    if report.fleet_answer is not None:
        console.print(f"[bold]closed loop[/]: {_answer(report.fleet_answer)}")
    if report.live is not None:
        render(report.live, console, LIVE_TITLE)


def score_table(report: ScoreReport, title: str) -> Table:
    """One row per detector: TP, FP, FN, precision, recall, time to detect."""
    table = Table(title=title)
    for col in (
        "detector",
        "TP",
        "FP",
        "rule met",
        "FN",
        "precision",
        "recall",
        "detectable/truth",
        "TTD p50",
        "TTD p90",
        "TTD windows p50/p90",
    ):
        table.add_column(col, justify="left" if col == "detector" else "right")
    for s in report.detectors.values():
        windows = (
            "–" if s.ttd_median_windows is None else f"{s.ttd_median_windows:.1f} / {s.ttd_p90_windows:.1f}"
        )
        table.add_row(
            s.detector,
            str(s.tp),
            str(s.fp),
            "–" if s.rule_met is None else str(s.rule_met),
            str(s.fn),
            _fmt(s.precision),
            _fmt(s.recall),
            f"{s.detectable}/{s.truth}",
            _duration(s.ttd_median_s),
            _duration(s.ttd_p90_s),
            windows,
        )
    return table


def _answer(a: dict[str, Any]) -> str:
    """What the simulated fleet did in answer to the planner (the truth manifest's ``closed_loop``)."""
    out = ", ".join(
        f"{gpu_h:,.0f} GPU-h {cause}" for cause, gpu_h in (a.get("gpu_h_out_of_service") or {}).items()
    )
    return (
        f"{a.get('repairs', 0)} repair(s), {a.get('failed_repairs', 0)} did not hold; "
        f"{len(a.get('lemons_cured') or {})} lemon(s) and {len(a.get('slow_hosts_cured') or {})} slow host(s) cured, "
        f"{len(a.get('retired') or [])} retired; out of service: {out or 'none'}" + _training(a)
    )


def _training(a: dict[str, Any]) -> str:
    """One segment's training figures, or each segment's and the whole run's goodput when there are several."""
    segments = a.get("jobs_by_segment") or []
    if len(segments) < 2:
        return _jobs(a.get("jobs"))
    each = "; ".join(
        f"{s.get('mode')} {s['days']:.3g} d: {s.get('jobs', 0)} job(s), {s.get('interruptions', 0)} interrupted, "
        f"ETTR mean {_fmt(s.get('ettr_mean'), 3)}, min {_fmt(s.get('ettr_min'), 3)}, goodput {_fmt(s.get('goodput'), 3)}"
        for s in segments
    )
    whole = a.get("jobs_whole_run") or {}
    lost = ", ".join(
        f"{gpu_h:,.0f} GPU-h {cause}" for cause, gpu_h in (whole.get("lost_gpu_h") or {}).items() if gpu_h
    )
    return f"; training by segment: {each}; whole run: goodput {_fmt(whole.get('goodput'), 3)}, training lost: {lost or 'none'}"


def _jobs(j: dict[str, Any] | None) -> str:
    """The closed loop's training figures (the manifest's ``closed_loop.jobs``), when the run has them."""
    if not j:
        return ""
    lost = ", ".join(
        f"{gpu_h:,.0f} GPU-h {cause}" for cause, gpu_h in (j.get("lost_gpu_h") or {}).items() if gpu_h
    )
    return (
        f"; {j.get('jobs', 0)} job(s), {j.get('interruptions', 0)} interrupted: ETTR mean "
        f"{_fmt(j.get('ettr_mean'), 3)}, min {_fmt(j.get('ettr_min'), 3)}; goodput {_fmt(j.get('goodput'), 3)}; "
        f"training lost: {lost or 'none'}"
    )


def _pages(p: PageScore) -> str:
    if not p.incidents:
        return f"no true incident; {p.pages_elsewhere} page(s) on hosts, {p.fleet_pages} about the fleet"
    return (
        f"{p.pages_on_incidents} page(s) (alert groups; {p.alerts_on_incidents} alerts) for {p.incidents} true "
        f"incident(s) on {p.hosts} host(s), {p.relapses_found} of them after a repair that did not cure "
        f"({p.relapses} such returns in the fleet's truth): {_fmt(p.pages_per_incident, 2)} per incident (goal "
        f"≤ 1.2; most on one incident {p.max_pages_per_incident}), {_fmt(p.pages_per_host, 2)} per host; "
        f"{p.after_repair_pages} opened by RepeatAfterRepair, {_fmt(p.first_pages_per_incident, 2)} per host "
        f"without those; {p.pages_elsewhere} on other hosts, {p.fleet_pages} about the fleet, {p.resolved} "
        f"resolved notification(s)"
    )


def _notes(s: DetectorScore) -> str:
    parts = [
        f"{kind} {row['found']}/{row['detectable']} found/detectable ({row['truth']} in truth)"
        for kind, row in sorted(s.breakdown.items())
    ]
    if s.lag_median_s is not None:
        parts.append(f"lag after threshold p50 {_duration(s.lag_median_s)}, p90 {_duration(s.lag_p90_s)}")
    if s.rule_met:
        parts.append(
            f"{s.rule_met} healthy host(s) flagged whose own faults meet a rule (rule met, not a lemon)"
        )
    if s.fp_per_day_per_1k_hosts is not None:
        parts.append(
            f"{s.fp_findings} FP finding(s): {s.fp_per_day_per_1k_hosts:.3f} per day per 1,000 hosts"
        )
    if s.tp_undetectable:
        parts.append(f"{s.tp_undetectable} found although not required by the truth's definition")
    if s.truth_definition:
        parts.append(f"to be found: {s.truth_definition}")
    if s.ttd_busy_median_windows is not None:
        parts.append(
            f"time to detect in windows the host ran a job while slow, p50 "
            f"{s.ttd_busy_median_windows:.1f} / p90 {_fmt(s.ttd_busy_p90_windows, 1)}"
        )
    if s.window_s is not None:
        parts.append(f"window {s.window_s:g} s ({s.window_source})")
    return "; ".join(parts) or "no ground truth for this detector"
