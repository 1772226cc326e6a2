"""``--format json|csv``: one helper turns every command's tables into JSON or CSV; every table command has it."""

from __future__ import annotations

import csv
import inspect
import io
import json
import re
from collections.abc import Iterator
from typing import Any

from rich.console import Console
from rich.table import Table
from typer.core import TyperGroup

from fleetpulse.commands import PARTS, load
from ground.tables import OutputFormat, Sheet, show

PRINTS_A_TABLE = re.compile(r"\bTable\(|\w*_table\(|\bshow\(|\brender\(|\bsweep_tables\(")
NOT_YET: set[str] = set()  # commands whose tables have no --format yet


def rich_table() -> Table:
    t = Table(title="lake [b]x[/b]")
    for c in ("table", "rows", "share", "dates"):
        t.add_column(c)
    t.add_row("host_sampled", "1,234", "0.5", "2026-01-01 … 2026-01-02")
    t.add_row("[red]xid[/red]", "7", "-", "")
    return t


def render(fmt: OutputFormat, *tables: Table | Sheet) -> str:
    out = io.StringIO()
    show(fmt, *tables, out=out)
    return out.getvalue()


def test_a_rich_table_as_json_has_plain_cells_and_numbers() -> None:
    assert json.loads(render(OutputFormat.json, rich_table())) == [
        {"table": "host_sampled", "rows": 1234, "share": 0.5, "dates": "2026-01-01 … 2026-01-02"},
        {"table": "xid", "rows": 7, "share": None, "dates": None},
    ]


def test_several_tables_as_json_are_keyed_by_title_and_as_csv_sections() -> None:
    raw = Sheet.of("offsets", ["topic", "next"], [["fleet.samples", 10]])
    assert set(json.loads(render(OutputFormat.json, rich_table(), raw))) == {"lake x", "offsets"}
    text = render(OutputFormat.csv, rich_table(), raw)
    first, second = text.split("\n\n")
    assert first.splitlines()[0] == "# lake x" and second.splitlines()[:2] == ["# offsets", "topic,next"]
    assert list(csv.reader(io.StringIO(first)))[1:] == [
        ["table", "rows", "share", "dates"],
        ["host_sampled", "1234", "0.5", "2026-01-01 … 2026-01-02"],
        ["xid", "7", "", ""],
    ]


def test_nested_values_are_json_in_a_csv_cell() -> None:
    sheet = Sheet.of_records("campaigns", [{"id": "c1", "visits": {"done": 2}, "scope": ["md0", "md1"]}])
    rows = list(csv.reader(io.StringIO(render(OutputFormat.csv, sheet))))
    assert rows == [["id", "visits", "scope"], ["c1", '{"done": 2}', '["md0", "md1"]']]


def commands() -> Iterator[tuple[str, Any]]:
    for name in PARTS:
        command = load(name)
        if isinstance(command, TyperGroup):
            yield from ((f"{name} {sub}", c) for sub, c in command.commands.items())
        else:
            yield name, command


def test_every_command_that_prints_a_table_takes_format() -> None:
    checked, missing = [], []
    for name, command in commands():
        if not PRINTS_A_TABLE.search(inspect.getsource(command.callback)) or name.split()[0] in NOT_YET:
            continue
        checked.append(name)
        if "--format" not in {opt for p in command.params for opt in p.opts}:
            missing.append(name)
    assert len(checked) >= 10, checked  # the pattern still finds the table commands
    assert missing == [], f"these print a table but have no --format: {missing}"


def test_a_narrow_log_folds_a_long_cell_instead_of_cutting_it() -> None:
    t = Table(title="quality")
    for c in ("table", "date", "files", "rows", "result", "failed expectations"):
        t.add_column(c)
    t.add_row("link_event_observed", "2025-01-01", "1", "5", "pass", "expect_column_values_to_be_unique")
    out = io.StringIO()
    show(OutputFormat.table, t, console=Console(file=out, width=60))
    text = out.getvalue()
    assert "…" not in text
    body = [line.split("│") for line in text.splitlines() if line.startswith("│")]
    first = "".join(cells[1].strip() for cells in body)  # the header's row is drawn with ┃
    assert first == "link_event_observed"
