"""Job tables in the terminal show cell text verbatim: a forged host id cannot inject rich markup."""

from __future__ import annotations

import polars as pl
from rich.console import Console

from analytics.jobs.cli import result_table


def test_markup_in_cells_and_headers_is_shown_literally() -> None:
    frame = pl.DataFrame({"host_id": ["c0-h[/]01", "[bold]c1-h02"], "[red]events": [3, 4]})
    console = Console(record=True, width=200, color_system=None)
    console.print(result_table("offenders[/]", frame))
    text = console.export_text()
    for literal in ("c0-h[/]01", "[bold]c1-h02", "[red]events", "offenders[/]"):
        assert literal in text
