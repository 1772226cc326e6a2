"""The reader API: published files only, hive dates, empty tables with schema, other writers' files, other filesystems."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.fs as pafs
import pytest

from analytics.errors import LakeError
from analytics.lake.batch import plan_batch
from analytics.lake.fs import LakeFS
from analytics.lake.reader import Lake, polars_schema, scan
from schemas import Codec
from schemas.arrow import to_table
from tests.analytics.lake.helpers import as_consumed


def test_missing_table_is_empty_with_schema(tmp_path: Path) -> None:
    frame = scan(tmp_path / "nowhere", "HostSampled").collect()
    assert frame.height == 0
    assert frame.schema["date"] == pl.Date
    assert frame.schema["gpus"] == polars_schema("host_sampled")["gpus"]
    assert list(frame.columns)[:7] == [
        "event_id",
        "event_type",
        "schema_version",
        "host_id",
        "cluster",
        "ts",
        "agent_seq",
    ]


def test_unknown_table_is_a_lake_error(tmp_path: Path) -> None:
    with pytest.raises(LakeError, match="unknown lake table"):
        scan(tmp_path, "nope")


def test_simulator_style_files_are_read(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    """The simulator's Parquet sink writes the same layout with its own file names and no manifest."""
    lake = LakeFS(tmp_path)
    alerts = [r for r in records if r["event_type"] == "AlertRaised"]
    samples = [r for r in records if r["event_type"] == "HostSampled"]
    lake.write_parquet("alert_raised/date=2025-01-01/part-00000.parquet", to_table("AlertRaised", alerts))
    lake.write_parquet(
        "host_sampled/date=2025-01-01/part-00000.parquet", to_table("HostSampled", samples[:5])
    )
    lake.write_parquet(
        "host_sampled/date=2025-01-02/part-00000.parquet", to_table("HostSampled", samples[5:])
    )
    lake.write_bytes("host_sampled/date=2025-01-02/.part-00001.parquet.tmp", b"partial")
    frame = scan(tmp_path, "host_sampled").collect()
    assert frame.height == len(samples)
    assert sorted(frame.get_column("date").unique().to_list()) == [dt.date(2025, 1, 1), dt.date(2025, 1, 2)]
    labels = scan(tmp_path, "alert_raised").collect().get_column("labels").to_list()
    assert labels and labels[0] is not None


def test_older_files_missing_a_column_read_as_null(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    lake = LakeFS(tmp_path)
    xids = [r for r in records if r["event_type"] == "XidRaised"]
    lake.write_parquet(
        "xid_raised/date=2025-01-01/old.parquet", to_table("XidRaised", xids).drop_columns(["message"])
    )
    frame = scan(tmp_path, "XidRaised").collect()
    assert frame.height == len(xids)
    assert frame.get_column("message").null_count() == len(xids)


def test_non_local_filesystem_goes_through_pyarrow(
    tmp_path: Path, records: list[dict[str, Any]], publisher_factory, lake: LakeFS
) -> None:  # type: ignore[no-untyped-def]
    publisher_factory().publish(plan_batch(as_consumed(records), Codec()))
    # the same lake seen through a non-local pyarrow filesystem (stands in for s3:// and friends)
    remote = LakeFS("lake", filesystem=pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem()))
    assert not remote.is_local
    via_remote = Lake(remote).scan("host_sampled").collect()
    via_local = Lake(lake).scan("host_sampled").collect()
    assert via_remote.height == via_local.height > 0
    assert sorted(via_remote.get_column("event_id")) == sorted(via_local.get_column("event_id"))
    assert via_remote.schema["date"] == pl.Date
