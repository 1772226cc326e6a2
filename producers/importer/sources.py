"""Reading incident files: CSV, JSON lines and JSON arrays, as numbered rows of strings.

Row numbers are what an operator sees in an editor: the file's line for CSV and JSON lines
(the CSV header is line 1), the element's position (from 1) for a JSON array.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from producers.importer.errors import SourceFileError

SourceFormat = Literal["csv", "jsonl", "json"]
_SUFFIXES: dict[str, SourceFormat] = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json"}


@dataclass(frozen=True, slots=True)
class Row:
    number: int
    fields: dict[str, Any]


@dataclass(frozen=True, slots=True)
class BadRow:
    number: int
    reason: str


def detect_format(path: Path) -> SourceFormat:
    found = _SUFFIXES.get(path.suffix.lower())
    if found is None:
        raise SourceFileError(
            f"unknown format {path.suffix!r}: use .csv, .jsonl, .ndjson or .json, or --format", path
        )
    return found


def read_rows(path: Path, fmt: SourceFormat, required: tuple[str, ...]) -> tuple[list[Row], list[BadRow]]:
    """Every row of the file; a row that cannot be read at all is a ``BadRow``, the others go on.

    A CSV without a required column is refused as a whole (SourceFileError): every row would fail.
    """
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceFileError(f"cannot read: {exc}", path) from exc
    if fmt == "csv":
        return _csv_rows(text, path, required), []
    if fmt == "jsonl":
        return _jsonl_rows(text)
    return _json_rows(text, path)


def _csv_rows(text: str, path: Path, required: tuple[str, ...]) -> list[Row]:
    reader = csv.DictReader(text.splitlines())
    header = [h.strip() for h in reader.fieldnames or []]
    missing = [c for c in required if c not in header]
    if missing:
        raise SourceFileError(
            f"wrong columns: missing {', '.join(missing)}; the file has {', '.join(header) or 'no header'} "
            "(name the source's columns in the mapping file's [columns])",
            path,
        )
    reader.fieldnames = header
    return [Row(reader.line_num, {k: v for k, v in row.items() if k is not None}) for row in reader]


def _jsonl_rows(text: str) -> tuple[list[Row], list[BadRow]]:
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
        _object_row(item, number, rows, bad)
    return rows, bad


def _json_rows(text: str, path: Path) -> tuple[list[Row], list[BadRow]]:
    try:
        items = json.loads(text)
    except ValueError as exc:
        raise SourceFileError(f"not JSON: {exc}", path) from exc
    if not isinstance(items, list):
        raise SourceFileError("a JSON file must hold an array of incident objects (or use JSON lines)", path)
    rows: list[Row] = []
    bad: list[BadRow] = []
    for number, item in enumerate(items, start=1):
        _object_row(item, number, rows, bad)
    return rows, bad


def _object_row(item: Any, number: int, rows: list[Row], bad: list[BadRow]) -> None:
    if isinstance(item, dict):
        rows.append(Row(number, item))
    else:
        bad.append(BadRow(number, f"not an object: {type(item).__name__}"))
