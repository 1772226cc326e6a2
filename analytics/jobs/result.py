"""What a job hands back: named tables, scalar findings and notes, and how they are written out."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, NamedTuple

import polars as pl


class JobResult(NamedTuple):
    """One job's output: tables (collected), a JSON-able summary, and notes on caveats or fallbacks."""

    name: str
    tables: dict[str, pl.DataFrame]
    summary: dict[str, Any]
    notes: list[str]


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
