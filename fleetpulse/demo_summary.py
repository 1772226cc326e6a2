"""The demo's closing summary as tables on the console."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table


def _fmt(value: Any, spec: str = ".3f", unit: str = "") -> str:
    return "n/a" if value is None else f"{value:{spec}}{unit}"


def _detector_rows(score: dict[str, Any]) -> list[tuple[str, ...]]:
    """Rows of the detection table; undefined ratios (no findings, nothing detectable) show as n/a."""
    rows: list[tuple[str, ...]] = []
    for name, d in sorted(score.get("detectors", {}).items()):
        rows.append(
            (
                name,
                f"{d.get('tp', 0)}/{d.get('fp', 0)}/{d.get('fn', 0)}",
                _fmt(d.get("precision")),
                _fmt(d.get("recall")),
                _fmt(d.get("ttd_median_h"), ".1f", " h"),
                _fmt(d.get("ttd_median_windows"), ".1f"),
            )
        )
    return rows


def _loop_rows(table: Table, s: dict[str, Any]) -> None:
    """Pages and findings against the simulator's truth, and what the fleet did in answer (closed loop)."""
    loop = s.get("loop") or {}
    if not loop:
        return
    table.add_row("fleet", "closed loop" if s.get("closed_loop") else "open loop (ignores actions)")
    table.add_row(
        f"pages per paged truth incident ({loop['incidents_paged']} on {loop.get('hosts_paged', 0)} of "
        f"{loop['true_lemons'] + loop['true_slow_hosts']} hosts)",
        _fmt(loop.get("pages_per_true_incident"), ".2f"),
    )
    table.add_row("  … incidents after a failed repair", f"{loop.get('relapses_paged', 0)}")
    table.add_row("  … per paged truth host", _fmt(loop.get("pages_per_paged_host"), ".2f"))
    for opened_by, n in loop.get("pages_by_opening_alert", {}).items():
        table.add_row(f"  pages opened by {opened_by}", f"{n:,}")
    table.add_row(
        f"findings per true lemon found ({loop['lemons_found']} of {loop['true_lemons']}): median / max",
        f"{_fmt(loop.get('findings_per_lemon_median'), 'g')} / {_fmt(loop.get('findings_per_lemon_max'), 'g')}",
    )
    answer = s["score"].get("fleet_answer") or {}  # the truth manifest's, as `fleetpulse score` read it
    if answer:
        table.add_row(
            "fleet's answer: repairs / failed / lemons cured / slow cured",
            f"{answer.get('repairs', 0)} / {answer.get('failed_repairs', 0)} / "
            f"{len(answer.get('lemons_cured', {}))} / {len(answer.get('slow_hosts_cured', {}))}",
        )
        for cause, gpu_h in (answer.get("gpu_h_out_of_service") or {}).items():
            table.add_row(f"GPU-hours out of service: {cause}", f"{gpu_h:,.0f}")
    for i, jobs in enumerate(s.get("jobs") or []):  # per segment: the history, then the live phase
        _job_rows(table, jobs, "history" if i == 0 else "live", causes=i == 0)


def _job_rows(table: Table, jobs: dict[str, Any], segment: str, causes: bool) -> None:
    """What the closed loop did to training: ETTR, goodput, and the GPU-hours the jobs lost by cause."""
    table.add_row(
        f"{segment} ({jobs.get('days', 0):g} days): ETTR of {jobs.get('jobs', 0)} job(s), mean / GPU-weighted / min",
        f"{_fmt(jobs.get('ettr_mean'), '.1%')} / {_fmt(jobs.get('ettr_gpu_weighted'), '.1%')} / "
        f"{_fmt(jobs.get('ettr_min'), '.1%')}",
    )
    table.add_row(
        f"fleet goodput ({jobs.get('useful_gpu_h', 0):,.0f} useful of {jobs.get('available_gpu_h', 0):,.0f} GPU-h)",
        _fmt(jobs.get("goodput"), ".1%"),
    )
    table.add_row("jobs interrupted by a fault", f"{jobs.get('interruptions', 0):,}")
    for cause, gpu_h in (jobs.get("lost_gpu_h") or {}).items() if causes else ():
        if gpu_h:
            table.add_row(f"GPU-hours training lost: {cause}", f"{gpu_h:,.0f}")


def print_summary(console: Console, s: dict[str, Any], run_id: str, run_dir: Path) -> None:
    """The demo's closing tables: what flowed through each topic and stage, and detection against the truth."""
    table = Table(title=f"fleetpulse demo — {run_id}", show_header=True)
    table.add_column("what")
    table.add_column("count", justify="right")
    for topic, n in s["events"].items():
        table.add_row(f"events in {topic}", f"{n:,}")
    table.add_row("dead-lettered records", f"{s['dlq']:,}")
    for det, n in sorted(s["findings"].items()):
        table.add_row(f"findings: {det}", f"{n:,}")
    for kind in ("rma_opened", "drain_requested", "deferred", "released", "train_halted", "returned"):
        table.add_row(f"actions: {kind}", f"{s['actions'].get(kind, 0):,}")
    table.add_row("alerts produced", f"{s['alerts'].get('produced', 0):,}")
    table.add_row("alerts delivered (verified, unique)", f"{s['alerts'].get('received', 0):,}")
    table.add_row("alert duplicates dropped by key", f"{s['alerts'].get('duplicates', 0):,}")
    pages = s["score"].get("pages") or {}
    table.add_row(
        "pages per true incident, scored (goal ≤ 1.2)", _fmt(pages.get("pages_per_incident"), ".2f")
    )
    table.add_row(
        "  … pages / incidents (after a failed repair)",
        f"{pages.get('pages_on_incidents', 0)} / {pages.get('incidents', 0)} ({pages.get('relapses_found', 0)})",
    )
    table.add_row("  … per true host, every page one incident", _fmt(pages.get("pages_per_host"), ".2f"))
    table.add_row(
        "  … per true host, not counting RepeatAfterRepair",
        _fmt(pages.get("first_pages_per_incident"), ".2f"),
    )
    _loop_rows(table, s)
    q = s["quality"]
    table.add_row("lake quality re-check", "passed" if q.get("validate_exit_code") == 0 else "FAILED")
    table.add_row("batches quarantined by the quality gates", f"{q.get('quarantined_batches', 0):,}")
    console.print(table)
    det = Table(title="detection vs ground truth")
    for col in ("detector", "TP/FP/FN", "precision", "recall", "time to detect (median)", "windows"):
        det.add_column(col)
    for row in _detector_rows(s["score"]):
        det.add_row(*row)
    console.print(det)
    params = s["score"].get("params") or {}
    for what, key in (("lemons", "lemon_truth"), ("slow hosts", "slow_truth")):
        if definition := params.get(key, {}).get("definition"):
            console.print(f"{what} to be found — {definition}")
    console.print(f"report: [bold]{s['report']}[/]   run folder: {run_dir}   total {s['elapsed_s']:.0f} s")
