"""Reading incident files: CSV, JSON lines and JSON arrays, as numbered rows of strings.

Row numbers are what an operator sees in an editor: the file's line for CSV and JSON lines
(the CSV header is line 1), the element's position (from 1) for a JSON array.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from producers.importer.errors import SourceFileError

SourceFormat = Literal["csv", "jsonl", "json"]
_SUFFIXES: dict[str, SourceFormat] = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json"}


@dataclass(frozen=True, slots=True)
class Row:
    """One row's cells for the wanted columns, in their order, as stripped text ('' when absent)."""

    number: int
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BadRow:
    number: int
    reason: str


def cell(value: Any) -> str:
    """A JSON value as the text a CSV cell would hold (``3.0`` → ``'3'``, null → ``''``)."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def detect_format(path: Path) -> SourceFormat:
    found = _SUFFIXES.get(path.suffix.lower())
    if found is None:
        raise SourceFileError(
            f"unknown format {path.suffix!r}: use .csv, .jsonl, .ndjson or .json, or --format", path
        )
    return found


def read_rows(
    path: Path, fmt: SourceFormat, required: tuple[str, ...], wanted: tuple[str, ...] | None = None
) -> tuple[list[Row], list[BadRow]]:
    """Every row of the file as the cells of ``wanted`` (default: ``required``); unreadable rows are ``BadRow``.

    A CSV without a required column is refused as a whole (SourceFileError): every row would fail.
    """
    wanted = wanted or required
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceFileError(f"cannot read: {exc}", path) from exc
    if fmt == "csv":
        return _csv_rows(text, path, required, wanted)
    if fmt == "jsonl":
        return _jsonl_rows(text, wanted)
    return _json_rows(text, path, wanted)


def _csv_rows(
    text: str, path: Path, required: tuple[str, ...], wanted: tuple[str, ...]
) -> tuple[list[Row], list[BadRow]]:
    # csv.reader, not DictReader: a tuple per row is a fraction of the cost on large traces
    reader = csv.reader(io.StringIO(text))
    header = [h.strip() for h in next(reader, [])]
    missing = [c for c in required if c not in header]
    if missing:
        raise SourceFileError(
            f"wrong columns: missing {', '.join(missing)}; the file has {', '.join(header) or 'no header'} "
            "(name the source's columns in the mapping file's [columns])",
            path,
        )
    index = [header.index(c) if c in header else -1 for c in wanted]
    width = len(header)
    rows: list[Row] = []
    bad: list[BadRow] = []
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:  # a field over csv's limit (128 KiB), a NUL: that row only
            bad.append(BadRow(reader.line_num, f"unreadable CSV: {exc}"))
            continue
        if not cells:
            continue
        if len(cells) != width:
            bad.append(BadRow(reader.line_num, f"{len(cells)} cells, the header has {width}"))
            continue
        rows.append(Row(reader.line_num, tuple(cells[i].strip() if i >= 0 else "" for i in index)))
    return rows, bad


def _jsonl_rows(text: str, wanted: tuple[str, ...]) -> tuple[list[Row], list[BadRow]]:
    rows: list[Row] = []
    bad: list[BadRow] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            bad.append(BadRow(number, f"not JSON: {exc.msg}"))
            continue
        except RecursionError:
            bad.append(BadRow(number, "not JSON: nested too deeply"))
            continue
        _object_row(item, number, wanted, rows, bad)
    return rows, bad


def _json_rows(text: str, path: Path, wanted: tuple[str, ...]) -> tuple[list[Row], list[BadRow]]:
    try:
        items = json.loads(text)
    except ValueError as exc:
        raise SourceFileError(f"not JSON: {exc}", path) from exc
    except RecursionError:  # one array: the file as a whole cannot be read (JSON lines can skip a row)
        raise SourceFileError("not JSON: nested too deeply (use JSON lines to skip such rows)", path) from None
    if not isinstance(items, list):
        raise SourceFileError("a JSON file must hold an array of incident objects (or use JSON lines)", path)
    rows: list[Row] = []
    bad: list[BadRow] = []
    for number, item in enumerate(items, start=1):
        _object_row(item, number, wanted, rows, bad)
    return rows, bad


def _object_row(item: Any, number: int, wanted: tuple[str, ...], rows: list[Row], bad: list[BadRow]) -> None:
    if isinstance(item, dict):
        rows.append(Row(number, tuple(cell(item.get(c)) for c in wanted)))
    else:
        bad.append(BadRow(number, f"not an object: {type(item).__name__}"))
