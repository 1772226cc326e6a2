"""ground.delta: the one Delta writer — dates, app-transaction versions, schema growth, reopening."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest

from ground import delta
from ground.delta import DeltaTables, with_date

DAY = 86_400_000


def rows(ids: list[str], ts: list[int], **extra: list[object]) -> pa.Table:
    return with_date(pa.table({"event_id": ids, "ts": ts, **extra}))


def test_date_is_the_utc_day_of_ts_even_before_the_epoch() -> None:
    table = rows(["a", "b", "c"], [0, DAY - 1, -1])
    assert table.column("date").to_pylist() == [dt.date(1970, 1, 1), dt.date(1970, 1, 1), dt.date(1969, 12, 31)]


def test_versions_are_committed_with_the_rows(tmp_path: Path) -> None:
    tables = DeltaTables(tmp_path)
    assert tables.version_of("t", "g:topic:0") is None
    tables.append("t", rows(["a"], [0]), partition_by=["date"], versions={"g:topic:0": 5})
    tables.append("t", rows([], []), partition_by=["date"], versions={"g:topic:0": 9, "g:topic:1": 2})
    again = DeltaTables(tmp_path)  # a restarted writer reads them from the log
    assert again.version_of("t", "g:topic:0") == 9 and again.version_of("t", "g:topic:1") == 2
    assert pl.read_delta(str(tmp_path / "t")).height == 1


def test_a_newer_schema_adds_its_columns_and_older_rows_read_null(tmp_path: Path) -> None:
    tables = DeltaTables(tmp_path)
    tables.append("t", rows(["a"], [0]), partition_by=["date"])
    tables.append("t", rows(["b"], [1], extra_col=[7]), partition_by=["date"])
    frame = pl.read_delta(str(tmp_path / "t")).sort("event_id")
    assert frame.get_column("extra_col").to_list() == [None, 7]


def test_a_table_reopened_every_few_commits_keeps_every_row_and_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(delta, "REOPEN_EVERY", 3)
    tables = DeltaTables(tmp_path)
    for i in range(8):
        tables.append("t", rows([f"e{i}"], [i]), partition_by=["date"], versions={"w": i + 1})
        assert tables.version_of("t", "w") == i + 1
    assert pl.read_delta(str(tmp_path / "t")).height == 8
