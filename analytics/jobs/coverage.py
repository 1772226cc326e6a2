"""What share of its input each result table rests on, so no table renormalises silently.

Every job records one ``Coverage`` per table it returns (``summary["coverage"][table]``), and the
report prints it under the table: "321 of 584 incidents classified (55.0 %)".
"""

from __future__ import annotations

from typing import Any, NamedTuple

import polars as pl

from schemas.taxonomy import INCIDENT_CAUSES, UNCLASSIFIED

# Every cause of the contract's taxonomy but ``unclassified`` (Llama 3's Table 5 and beyond).
CLASSIFIED_CAUSES = tuple(c for c in INCIDENT_CAUSES if c != UNCLASSIFIED)


class Coverage(NamedTuple):
    """``counted`` of ``total`` ``unit`` are ``what`` (e.g. 321 of 584 incidents classified)."""

    counted: int
    total: int
    unit: str
    what: str

    @property
    def fraction(self) -> float | None:
        return self.counted / self.total if self.total else None

    def text(self) -> str:
        share = f" ({self.fraction:.1%})" if self.fraction is not None else ""
        return f"{self.counted:,} of {self.total:,} {self.unit} {self.what}{share}"

    def as_dict(self) -> dict[str, Any]:
        return {**self._asdict(), "fraction": self.fraction, "text": self.text()}


def is_classified(cause: pl.Expr) -> pl.Expr:
    """A cause of the taxonomy other than ``unclassified`` (a missing or unknown one is not)."""
    return cause.is_in(CLASSIFIED_CAUSES).fill_null(False)


def classified_coverage(frame: pl.DataFrame, unit: str, column: str = "cause") -> Coverage:
    """How many rows of ``frame`` carry a classified ``column``."""
    counted = frame.filter(is_classified(pl.col(column))).height if frame.height else 0
    return Coverage(counted, frame.height, unit, "classified")


def coverage_of(entries: dict[str, Coverage]) -> dict[str, dict[str, Any]]:
    """The JSON-able ``summary["coverage"]`` of a job."""
    return {table: cov.as_dict() for table, cov in entries.items()}


def coverage_text(summary: dict[str, Any], table: str) -> str | None:
    """The coverage sentence of one table of a job's summary, or None when the job gave none."""
    entry = summary.get("coverage", {}).get(table)
    return None if entry is None else str(entry["text"])
