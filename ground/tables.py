"""Every table a command prints, for a person (Rich) or for a script (``--format json`` or ``csv``).

A command builds its Rich ``Table`` (or a ``Sheet`` of raw values) and hands it to ``show`` with the
format its ``--format`` option (``FormatOpt``) gave: one place turns tables into JSON and CSV.

- ``json``: one table is a list of objects keyed by column; several are an object keyed by title.
- ``csv``: a header row then the rows; several tables are separated by a blank line, each after a
  ``# <title>`` line. Lists and mappings in a cell are written as JSON.

A cell that reads as a whole or decimal number (``1,234`` too) becomes a number; an empty one (or an en dash) null.
"""

from __future__ import annotations

import csv
import json
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import IO, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")
GROUPED = re.compile(r"-?\d{1,3}(,\d{3})+")  # 1,234,567 as the tables print counts
EMPTY = {"", "–", "-", "—"}


class OutputFormat(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"


FormatOpt = Annotated[
    OutputFormat,
    typer.Option("--format", case_sensitive=False, help="table (for a person), json or csv (for a script)."),
]


@dataclass(frozen=True, slots=True)
class Sheet:
    """One table of raw values: a title, its columns, its rows."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]

    @classmethod
    def of(cls, title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> Sheet:
        return cls(title, tuple(columns), tuple(tuple(r) for r in rows))

    @classmethod
    def of_records(cls, title: str, records: Sequence[Mapping[str, Any]]) -> Sheet:
        columns = list(dict.fromkeys(k for r in records for k in r))
        return cls.of(title, columns, ([r.get(c) for c in columns] for r in records))

    @classmethod
    def of_table(cls, table: Table) -> Sheet:
        """The plain text of a Rich table's cells (markup removed, numbers parsed)."""
        columns = [_plain(c.header) or f"column{i + 1}" for i, c in enumerate(table.columns)]
        cells = [[_value(_plain(cell)) for cell in c.cells] for c in table.columns]
        return cls.of(_plain(table.title) if table.title else "", columns, zip(*cells, strict=True))

    def records(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]

    def table(self) -> Table:
        view = Table(title=self.title or None)
        for c in self.columns:
            view.add_column(c, overflow="fold")
        for row in self.rows:
            view.add_row(*(Text("–" if v is None else _cell(v)) for v in row))
        return view


def _plain(renderable: Any) -> str:
    if isinstance(renderable, Text):
        return renderable.plain
    return Text.from_markup(renderable).plain if isinstance(renderable, str) else str(renderable)


def _value(text: str) -> Any:
    text = text.strip()
    if text in EMPTY:
        return None
    if GROUPED.fullmatch(text):
        return int(text.replace(",", ""))
    if NUMBER.fullmatch(text):
        return float(text) if any(ch in text for ch in ".eE") else int(text)
    return text


def _cell(value: Any) -> str:
    if isinstance(value, Mapping | list | tuple):
        return json.dumps(value, default=str, sort_keys=True)
    return "" if value is None else str(value)


def folded(table: Table) -> Table:
    """``table`` with cells that do not fit folded onto the next line, not cut to "…" (80-column logs)."""
    for column in table.columns:
        if column.overflow == "ellipsis":  # Rich's default; a column that chose otherwise keeps its choice
            column.overflow = "fold"
    return table


def show(
    fmt: OutputFormat, *tables: Table | Sheet, console: Console | None = None, out: IO[str] | None = None
) -> None:
    """Print ``tables`` as ``fmt`` asks: Rich tables on ``console``, JSON or CSV on ``out`` (stdout)."""
    if fmt is OutputFormat.table:
        console = console or Console()
        for t in tables:
            console.print(t.table() if isinstance(t, Sheet) else folded(t))
        return
    out = out or sys.stdout
    sheets = [t if isinstance(t, Sheet) else Sheet.of_table(t) for t in tables]
    if fmt is OutputFormat.json:
        body: Any = sheets[0].records() if len(sheets) == 1 else {s.title: s.records() for s in sheets}
        out.write(json.dumps(body, indent=2, default=str) + "\n")
        return
    writer = csv.writer(out, lineterminator="\n")
    for i, s in enumerate(sheets):
        if len(sheets) > 1:
            out.write(("\n" if i else "") + f"# {s.title}\n")
        writer.writerow(s.columns)
        writer.writerows([_cell(v) for v in row] for row in s.rows)


def messages(fmt: OutputFormat) -> Console:
    """Where a command's other lines go: stdout beside a table, stderr beside JSON or CSV (kept parseable)."""
    return Console(stderr=fmt is not OutputFormat.table)
