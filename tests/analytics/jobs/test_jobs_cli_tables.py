"""Job tables in the terminal show cell text verbatim: a forged host id cannot inject rich markup."""

from __future__ import annotations

import polars as pl
from rich.console import Console

from analytics.jobs.cli import result_table
from analytics.jobs.render import markdown_table


def test_markup_in_cells_and_headers_is_shown_literally() -> None:
    frame = pl.DataFrame({"host_id": ["c0-h[/]01", "[bold]c1-h02"], "[red]events": [3, 4]})
    console = Console(record=True, width=200, color_system=None)
    console.print(result_table("offenders[/]", frame))
    text = console.export_text()
    for literal in ("c0-h[/]01", "[bold]c1-h02", "[red]events", "offenders[/]"):
        assert literal in text


def test_event_times_print_as_utc_not_epoch_ms() -> None:
    """The offenders table's first_ts / last_ts: a person reads a time, not 1704067200000."""
    frame = pl.DataFrame(
        {"host_id": ["n1"], "events": [3], "first_ts": [1_704_067_200_000], "last_ts": [1_704_153_600_000]}
    )
    console = Console(width=200, record=True)
    console.print(result_table("offenders", frame))
    for text in (console.export_text(), markdown_table(frame)):
        assert "2024-01-01 00:00 UTC" in text and "2024-01-02 00:00 UTC" in text
        assert "1704067200000" not in text and "1.704e+12" not in text
