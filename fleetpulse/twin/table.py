"""The sweep as terminal tables: one row per variant, means ± 95 % half widths over seeds."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from fleetpulse.evaluation.lemon_truth import LemonMateriality
from fleetpulse.twin.outcome import CAUSES
from fleetpulse.twin.sweep import Interval, VariantOutcome

SHOWN = (
    ("ettr_mean", "ETTR", 4),
    ("goodput", "goodput", 4),
    ("interruptions", "interruptions", 1),
    ("pages", "pages", 1),
    ("pages_per_true_incident", "pages/incident", 2),
    ("precision", "precision", 3),
    ("lemon_recall", "lemon recall", 3),
    ("retired", "retired", 1),
)


def _text(ci: Interval | None, digits: int) -> str:
    return "-" if ci is None else ci.text(digits)


def sweep_tables(results: Sequence[VariantOutcome], title: str) -> tuple[Table, Table]:
    """The figures per variant, and the GPU-hours each lost per cause."""
    figures = Table(title=title, caption=f"lemon recall against the {LemonMateriality().describe()}")
    lost = Table(title="GPU-hours lost by cause")
    for table in (figures, lost):
        table.add_column("variant")
    for _, label, _ in SHOWN:
        figures.add_column(label, justify="right")
    figures.add_column("Δ goodput vs first (paired)", justify="right")
    for cause in CAUSES:
        lost.add_column(cause.replace("_", " "), justify="right")
    for r in results:
        delta = _text(r.versus(results[0], "goodput"), 4)
        figures.add_row(r.variant.label, *(_text(r.figure(k), d) for k, _, d in SHOWN), delta)
        lost.add_row(r.variant.label, *(_text(r.lost(c), 0) for c in CAUSES))
    return figures, lost
