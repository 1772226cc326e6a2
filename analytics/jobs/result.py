"""What a job hands back: named tables, scalar findings and notes, and how they are written out."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, NamedTuple, get_type_hints

import polars as pl

_POLARS_TYPES: dict[type, pl.DataType] = {
    float: pl.Float64(),
    int: pl.Int64(),
    bool: pl.Boolean(),
    str: pl.String(),
}


class JobResult(NamedTuple):
    """One job's output: tables (collected), a JSON-able summary, and notes on caveats or fallbacks."""

    name: str
    tables: dict[str, pl.DataFrame]
    summary: dict[str, Any]
    notes: list[str]


def fit_table(
    rows: list[dict[str, Any]], fit: type, after: dict[str, pl.DataType] | None = None
) -> pl.DataFrame:
    """Fits by ``mode`` as a table with its columns (the ``fit`` NamedTuple's, then ``after``) even when none was made.

    A small lake may give none: readers (the report, the notebooks) then see an empty table with
    the columns they select, not a frame without columns.
    """
    fields = {name: _POLARS_TYPES[t] for name, t in get_type_hints(fit).items()}
    return pl.DataFrame(rows, schema={"mode": pl.String(), **fields, **(after or {})})


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item"):  # numpy scalars
        return _jsonable(value.item())
    return value


def write_result(result: JobResult, out: Path) -> Path:
    """Write ``<out>/<job>/<table>.parquet`` + ``.csv`` and ``summary.json``; return the job folder."""
    folder = out / result.name
    folder.mkdir(parents=True, exist_ok=True)
    for name, table in result.tables.items():
        table.write_parquet(folder / f"{name}.parquet")
        table.write_csv(folder / f"{name}.csv")
    doc = {"job": result.name, "summary": _jsonable(result.summary), "notes": result.notes}
    (folder / "summary.json").write_text(json.dumps(doc, indent=2, default=str))
    return folder
