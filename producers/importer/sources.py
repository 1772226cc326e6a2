"""Reading incident files: CSV, JSON lines and JSON arrays, as numbered rows of strings.

Row numbers are what an operator sees in an editor: the file's line for CSV and JSON lines
(the CSV header is line 1), the element's position (from 1) for a JSON array. A column may be a
dotted path into a nested object (``fault_type.level1``: a JSON value, or a CSV cell holding a JSON
object), or several such paths whose values join with ``/``; an object read as a plain string is
kept as its JSON text, and ``nested_object_warnings`` says so.
"""

from __future__ import annotations

import csv
import io
import json
import operator
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from producers.importer.errors import SourceFileError

SourceFormat = Literal["csv", "jsonl", "json"]
Column = str | tuple[str, ...]  # a column name or dotted path; a tuple: several, joined with "/"
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
    """A JSON value as the text a CSV cell would hold (``3.0`` → ``'3'``, null → ``''``, an object → JSON)."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value).strip()


def _walk(value: Any, path: list[str]) -> Any:
    for key in path:
        if isinstance(value, str) and value.lstrip().startswith("{"):
            try:
                value = json.loads(value)
            except ValueError:
                return None
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def lookup(item: dict[str, Any], name: str) -> Any:
    """``item[name]``, else the dotted path ``name`` walked through nested objects (None when absent)."""
    if name in item or "." not in name:
        return item.get(name)
    parts = name.split(".")
    for n in range(len(parts) - 1, 0, -1):  # longest key first: a key may itself hold a dot
        head = ".".join(parts[:n])
        if head in item:
            return _walk(item[head], parts[n:])
    return None


def _joined(values: list[str]) -> str:
    return "/".join(v for v in values if v)


def _object_cell(item: dict[str, Any], column: Column) -> str:
    if isinstance(column, str):
        return cell(lookup(item, column))
    return _joined([cell(lookup(item, c)) for c in column])


def base_names(column: Column) -> list[str]:
    """The names a column needs in a CSV header: each path's first part (or the whole name)."""
    return [column] if isinstance(column, str) else list(column)


def nested_object_warnings(
    rows: list[Row], wanted: tuple[Column, ...], positions: tuple[int, ...]
) -> list[str]:
    """A line per column (of those at ``positions`` in ``wanted``) whose cells hold JSON objects read as text.

    Such a class would be classified 0 %, silently, without it.
    """
    out = []
    for i in positions:
        column = wanted[i]
        if not column:
            continue
        cells = map(operator.itemgetter(i), map(_VALUES, rows))  # C-level loops: this reads every row
        n = sum(map(_is_object, filter(_OPENS_OBJECT, cells)))
        if n:
            name = column if isinstance(column, str) else "/".join(column)
            out.append(
                f"column {name!r} holds a JSON object in {n} of {len(rows)} rows; name one of its "
                f'fields with a dotted path in the mapping (e.g. "{name}.level1")'
            )
    return out


_VALUES = operator.attrgetter("values")
_OPENS_OBJECT = operator.methodcaller("startswith", ("{", "["))


def _is_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict | list)
    except ValueError:
        return False


def detect_format(path: Path) -> SourceFormat:
    found = _SUFFIXES.get(path.suffix.lower())
    if found is None:
        raise SourceFileError(
            f"unknown format {path.suffix!r}: use .csv, .jsonl, .ndjson or .json, or --format", path
        )
    return found


def read_rows(
    path: Path, fmt: SourceFormat, required: tuple[Column, ...], wanted: tuple[Column, ...] | None = None
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


def _in_header(name: str, header: list[str]) -> bool:
    return name in header or ("." in name and _csv_path(name, header) is not None)


def _csv_path(name: str, header: list[str]) -> tuple[int, list[str]] | None:
    """(index of the column holding a JSON object, path inside it) for a dotted ``name``."""
    parts = name.split(".")
    for n in range(len(parts) - 1, 0, -1):
        head = ".".join(parts[:n])
        if head in header:
            return header.index(head), parts[n:]
    return None


def _csv_rows(
    text: str, path: Path, required: tuple[Column, ...], wanted: tuple[Column, ...]
) -> tuple[list[Row], list[BadRow]]:
    # csv.reader, not DictReader: a tuple per row is a fraction of the cost on large traces
    reader = csv.reader(io.StringIO(text))
    header = [h.strip() for h in next(reader, [])]
    missing = [c for col in required for c in base_names(col) if not _in_header(c, header)]
    if missing:
        raise SourceFileError(
            f"wrong columns: missing {', '.join(missing)}; the file has {', '.join(header) or 'no header'} "
            "(name the source's columns in the mapping file's [columns])",
            path,
        )
    nested = any(not isinstance(c, str) or (c not in header and "." in c) for c in wanted)
    width = len(header)
    rows: list[Row] = []
    bad: list[BadRow] = []
    if nested:  # a dotted path or a join: each row through the (slower) general lookup
        for cells in _readable(reader, bad):
            if cells and len(cells) == width:
                item = dict(zip(header, cells, strict=True))
                rows.append(Row(reader.line_num, tuple(_object_cell(item, c) for c in wanted)))
            elif cells:
                bad.append(BadRow(reader.line_num, f"{len(cells)} cells, the header has {width}"))
        return rows, bad
    # a column the file lacks reads the empty cell appended at the row's end (index ``width``)
    pick = operator.itemgetter(
        *[header.index(c) if c in header else width for c in wanted if isinstance(c, str)]
    )
    strip = str.strip
    for cells in _readable(reader, bad):
        if not cells:
            continue
        if len(cells) != width:
            bad.append(BadRow(reader.line_num, f"{len(cells)} cells, the header has {width}"))
            continue
        cells.append("")
        rows.append(Row(reader.line_num, tuple(map(strip, pick(cells)))))
    return rows, bad


def _readable(reader: Iterator[list[str]], bad: list[BadRow]) -> Iterator[list[str]]:
    """The reader's rows; a row csv cannot read (a field over its 128 KiB limit, a NUL) is a bad row."""
    while True:
        try:
            yield next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            bad.append(BadRow(reader.line_num, f"unreadable CSV: {exc}"))  # type: ignore[attr-defined]


def _jsonl_rows(text: str, wanted: tuple[Column, ...]) -> tuple[list[Row], list[BadRow]]:
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


def _json_rows(text: str, path: Path, wanted: tuple[Column, ...]) -> tuple[list[Row], list[BadRow]]:
    try:
        items = json.loads(text)
    except ValueError as exc:
        raise SourceFileError(f"not JSON: {exc}", path) from exc
    except RecursionError:  # one array: the file as a whole cannot be read (JSON lines can skip a row)
        raise SourceFileError(
            "not JSON: nested too deeply (use JSON lines to skip such rows)", path
        ) from None
    if not isinstance(items, list):
        raise SourceFileError("a JSON file must hold an array of incident objects (or use JSON lines)", path)
    rows: list[Row] = []
    bad: list[BadRow] = []
    for number, item in enumerate(items, start=1):
        _object_row(item, number, wanted, rows, bad)
    return rows, bad


def _object_row(
    item: Any, number: int, wanted: tuple[Column, ...], rows: list[Row], bad: list[BadRow]
) -> None:
    if isinstance(item, dict):
        rows.append(Row(number, tuple(_object_cell(item, c) for c in wanted)))
    else:
        bad.append(BadRow(number, f"not an object: {type(item).__name__}"))
