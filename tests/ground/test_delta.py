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
    assert table.column("date").to_pylist() == [
        dt.date(1970, 1, 1),
        dt.date(1970, 1, 1),
        dt.date(1969, 12, 31),
    ]


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


def test_a_newer_schema_adds_fields_inside_a_list_of_structs_and_relaxes_not_null(tmp_path: Path) -> None:
    """HostSampled v2: new nullable GPU fields inside ``gpus`` and a step time that may be null."""
    gpu1 = pa.struct([pa.field("gpu", pa.int32(), nullable=False)])
    gpu2 = pa.struct([pa.field("gpu", pa.int32(), nullable=False), pa.field("gen_max", pa.int32())])
    v1 = pa.schema(
        [
            pa.field("event_id", pa.string()),
            pa.field("ts", pa.int64()),
            pa.field("step", pa.float32(), nullable=False),
            pa.field("gpus", pa.list_(gpu1)),
        ]
    )
    v2 = pa.schema([*list(v1)[:2], pa.field("step", pa.float32()), pa.field("gpus", pa.list_(gpu2))])
    tables = DeltaTables(tmp_path)
    tables.append(
        "t",
        with_date(pa.Table.from_pylist([{"event_id": "a", "ts": 0, "step": 1.0, "gpus": [{"gpu": 0}]}], v1)),
    )
    newer = with_date(
        pa.Table.from_pylist(
            [{"event_id": "b", "ts": 1, "step": None, "gpus": [{"gpu": 0, "gen_max": 5}]}], v2
        )
    )
    table = tables.open("t")
    assert table is not None and DeltaTables._schema_mode(table, newer) == "merge"
    tables.append("t", newer)
    assert (
        DeltaTables._schema_mode(tables.open("t", refresh=True), newer) is None
    )  # merged once, not every write
    frame = pl.read_delta(str(tmp_path / "t")).sort("event_id")
    assert frame.get_column("step").to_list() == [1.0, None]
    assert frame.get_column("gpus").to_list() == [[{"gpu": 0, "gen_max": None}], [{"gpu": 0, "gen_max": 5}]]


def test_every_row_gets_its_utc_date_and_timestamp_beside_epoch_ms(tmp_path: Path) -> None:
    ts = [0, 86_399_999, 1_767_225_600_123]
    table = with_date(pa.table({"event_id": ["a", "b", "c"], "ts": pa.array(ts, pa.int64())}))
    assert table.schema.field("ts_utc").type == pa.timestamp("ms", tz="UTC")
    assert [t.timestamp() * 1000 for t in table.column("ts_utc").to_pylist()] == ts
    assert [str(d) for d in table.column("date").to_pylist()] == ["1970-01-01", "1970-01-01", "2026-01-01"]
    assert with_date(table).column_names == table.column_names  # applied twice, the same columns
    tables = DeltaTables(tmp_path)
    tables.append("t", table, partition_by=["date"])
    stored = pl.read_delta(str(tmp_path / "t"))
    assert stored["ts_utc"].dtype == pl.Datetime("us", "UTC")  # Delta keeps timestamps in microseconds
    assert (stored["ts_utc"].dt.epoch("ms") == stored["ts"]).all()
