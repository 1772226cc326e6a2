"""Render result tables as Markdown and HTML (small, dependency-free formatters for the report)."""

from __future__ import annotations

import base64
import datetime as dt
import html
from pathlib import Path
from typing import Any

import polars as pl

MAX_ROWS = 25


def fmt(value: Any) -> str:
    """Numbers to 4 significant digits, None as an empty cell."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value != value:  # NaN
            return "nan"
        return f"{value:.4g}"
    return str(value)


def fmt_cell(column: str, value: Any) -> str:
    """``fmt``, with event times (epoch ms in a ``*_ts`` column) as UTC times a person reads."""
    if column.endswith("_ts") and isinstance(value, int) and not isinstance(value, bool):
        return dt.datetime.fromtimestamp(value / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return fmt(value)


def _rows(df: pl.DataFrame, max_rows: int) -> tuple[list[str], list[list[str]], int]:
    shown = df.head(max_rows)
    rows = [[fmt_cell(c, v) for c, v in zip(df.columns, row, strict=True)] for row in shown.iter_rows()]
    return df.columns, rows, df.height - shown.height


def markdown_table(df: pl.DataFrame, max_rows: int = MAX_ROWS) -> str:
    if df.width == 0:
        return "_(empty)_\n"
    cols, rows, more = _rows(df, max_rows)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    if more:
        lines.append(f"\n_… {more} more rows_")
    return "\n".join(lines) + "\n"


def html_table(df: pl.DataFrame, max_rows: int = MAX_ROWS) -> str:
    if df.width == 0:
        return "<p><em>(empty)</em></p>"
    cols, rows, more = _rows(df, max_rows)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    tail = f"<p><em>… {more} more rows</em></p>" if more else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{tail}"


def html_image(path: Path) -> str:
    """A PNG embedded as a data URI, so report.html is one self-contained file."""
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<figure><img alt="{html.escape(path.stem)}" src="data:image/png;base64,{data}"/></figure>'


HTML_HEAD = """<!doctype html><html><head><meta charset="utf-8"><title>{title}</title><style>
body{{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}}
table{{border-collapse:collapse;margin:.5em 0 1.5em;font-size:13px}}
th,td{{border:1px solid #ccc;padding:3px 8px;text-align:right}} th{{background:#f3f3f3}}
td:first-child,th:first-child{{text-align:left}} img{{max-width:100%}} .note{{color:#a60}}
.ok{{color:#080}} .bad{{color:#c00}} .coverage{{color:#555;font-style:italic;margin:.2em 0}}
</style></head><body>"""
