"""The backtest's files: ``report.md`` and a self-contained ``report.html`` (like ``fleetpulse report``),
``summary.json``, ``sweep.csv`` and per variant ``v<i>/`` its findings, actions and capacity as CSV and a plot.

Nothing in them depends on the wall clock or the machine: the same lake and policy write the same bytes.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from analytics.jobs.render import HTML_HEAD, html_image, html_table, markdown_table
from fleetpulse.backtest.plots import plot_capacity, plot_sweep
from fleetpulse.backtest.run import VariantResult, sweep_table

TITLE = "fleetpulse backtest"
STATUSES = ("both", "backtest only", "live only")  # column order of the per-rule table


def variant_summary(r: VariantResult) -> dict[str, Any]:
    """JSON-ready figures of one variant (what ``summary.json`` lists per variant)."""
    return {
        "values": {k: v for k, v in r.variant.values},
        "period": {"start_ts": r.replay.start_ts, "end_ts": r.replay.end_ts},
        "replayed": r.replay.replayed,
        "rejected": r.replay.rejected,
        "late": r.replay.late,
        "findings": r.counts(),
        "actions": r.actions.to_dicts(),
        "capacity": r.capacity.summary(),
        "score": r.score.to_dict() if r.score is not None else None,
    }


def score_table(r: VariantResult) -> pl.DataFrame:
    if r.score is None:
        return pl.DataFrame()
    cols = (
        "truth",
        "detectable",
        "predicted",
        "tp",
        "fp",
        "fn",
        "precision",
        "recall",
        "ttd_median_s",
        "truth_definition",
    )
    rows = [{"detector": name, **{c: getattr(d, c) for c in cols}} for name, d in r.score.detectors.items()]
    return pl.DataFrame(rows, infer_schema_length=None)


def by_rule(r: VariantResult) -> pl.DataFrame:
    """Findings per detector and rule: in both runs, only in the backtest (appear), only live (disappear)."""
    if r.findings.height == 0:
        return pl.DataFrame()
    table = (
        r.findings.group_by("detector", "rule", "status")
        .len()
        .pivot(on="status", index=["detector", "rule"], values="len")
        .fill_null(0)
        .sort("detector", "rule")
    )
    return table.select("detector", "rule", *(s for s in STATUSES if s in table.columns))


def _sections(r: VariantResult, folder: Path) -> list[tuple[str, pl.DataFrame | str | Path]]:
    """(heading, table, text or plot) of one variant, in report order."""
    changed = r.findings.filter(pl.col("status") != "both")
    capacity = pl.DataFrame([r.capacity.summary()])
    out: list[tuple[str, pl.DataFrame | str | Path]] = [
        (
            "Replayed",
            f"records replayed {r.replay.replayed}; refused by validation {r.replay.rejected}; "
            f"too late to count {r.replay.late}",
        ),
        ("Findings against the live detectors, per rule", by_rule(r)),
        ("Findings that appear (backtest only) or disappear (live only)", changed),
        ("Actions against the live planner, per kind", r.actions),
        ("Capacity impact", capacity),
        ("Hosts out per day", plot_capacity(r, folder)),
    ]
    if r.score is not None:
        out.append(("Against the simulator's truth", score_table(r)))
    return out


def _markdown(part: pl.DataFrame | str | Path, base: Path) -> str:
    if isinstance(part, pl.DataFrame):
        return markdown_table(part)
    if isinstance(part, Path):
        return f"![{part.stem}]({part.relative_to(base).as_posix()})\n"
    return part + "\n"


def _html(part: pl.DataFrame | str | Path) -> str:
    if isinstance(part, pl.DataFrame):
        return html_table(part)
    if isinstance(part, Path):
        return html_image(part)
    return f"<p>{html.escape(part)}</p>"


def write_report(results: Sequence[VariantResult], out: Path, params: Mapping[str, Any]) -> tuple[Path, Path]:
    """Write every file of the backtest into ``out``; returns (report.html, report.md)."""
    out.mkdir(parents=True, exist_ok=True)
    table = sweep_table(results)
    table.write_csv(out / "sweep.csv")
    summary = {"params": dict(params), "variants": [variant_summary(r) for r in results]}
    (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True, default=str) + "\n")
    header = ", ".join(f"{k}: {v}" for k, v in params.items())
    md = [f"# {TITLE}\n", header + "\n"]
    body = [HTML_HEAD.format(title=TITLE), f"<h1>{TITLE}</h1><p>{html.escape(header)}</p>"]
    if len(results) > 1:
        plot = plot_sweep(results, out)
        md += ["## Sweep\n", markdown_table(table, max_rows=200), _markdown(plot, out)]
        body += ["<h2>Sweep</h2>", html_table(table, max_rows=200), html_image(plot)]
    for i, r in enumerate(results):
        folder = out / f"v{i}"
        folder.mkdir(exist_ok=True)
        r.findings.write_csv(folder / "findings.csv")
        r.actions.write_csv(folder / "actions.csv")
        r.capacity.daily.write_csv(folder / "capacity_daily.csv")
        md.append(f"## Variant {i}: {r.variant.label}\n")
        body.append(f"<h2>Variant {i}: {html.escape(r.variant.label)}</h2>")
        for heading, part in _sections(r, folder):
            md += [f"### {heading}\n", _markdown(part, out)]
            body += [f"<h3>{html.escape(heading)}</h3>", _html(part)]
    body.append("</body></html>")
    md_path, html_path = out / "report.md", out / "report.html"
    md_path.write_text("\n".join(md))
    html_path.write_text("\n".join(body) + "\n")
    return html_path, md_path
