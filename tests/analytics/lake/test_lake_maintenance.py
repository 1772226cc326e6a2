"""Upkeep: optimize.compact on closed date partitions, vacuum; neither changes what a reader or a restart sees."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from analytics.lake.batch import plan_batch
from analytics.lake.layout import OFFSETS_TABLE, REJECTED_TABLE
from analytics.lake.maintenance import compact, lake_tables, vacuum
from analytics.lake.offsets import resume_offsets
from analytics.lake.reader import Lake
from analytics.lake.synthetic import synthetic_records
from ground.delta import DeltaTables
from ground.settings.lake import LakeSettings
from schemas import Codec
from tests.analytics.lake.helpers import as_consumed, files_per_date, garbage, ids_of, next_offsets

TODAY = dt.date(2025, 1, 3)  # with compact_after_days=1: 2025-01-01 is closed, 2025-01-02 (yesterday) is open
CLOSED, OPEN = "2025-01-01", "2025-01-02"
GROUP = LakeSettings().group_id


@pytest.fixture
def busy(lake: DeltaTables, publisher_factory) -> list[Any]:  # type: ignore[no-untyped-def]
    """A lake of many small commits: each date partition of the big tables holds several files."""
    consumed = [*as_consumed(synthetic_records(n_hosts=4, samples_per_host=6), partitions=4)]
    consumed.append(garbage("fleet.errors", 0, 1_000))
    publisher = publisher_factory()
    for i in range(0, len(consumed), 12):
        publisher.publish(plan_batch(consumed[i : i + 12], Codec()))
    return consumed


def snapshot(lake: DeltaTables) -> dict[str, list[str]]:
    return {t: ids_of(lake, t) for t in Lake(lake).tables()}


def stored_parquet(lake: DeltaTables, table: str) -> int:
    return sum(1 for _ in Path(lake.uri(table)).rglob("*.parquet"))


def test_compaction_merges_closed_partitions_only_and_keeps_every_row(
    lake: DeltaTables, busy: list[Any]
) -> None:
    before = {t: files_per_date(lake, t) for t in Lake(lake).tables()}
    rows = snapshot(lake)
    assert before["host_sampled"][CLOSED] > 1 and before["host_sampled"][OPEN] > 1

    results = compact(lake, LakeSettings(compact_after_days=1), today=TODAY)
    after = {t: files_per_date(lake, t) for t in Lake(lake).tables()}
    for table, dates in before.items():
        assert after[table].get(OPEN) == dates.get(OPEN), f"{table}: an open partition was compacted"
        assert after[table].get(CLOSED, 0) == min(1, dates.get(CLOSED, 0)), table
    merged = {r.table: r for r in results}
    assert merged["host_sampled"].files_removed == before["host_sampled"][CLOSED]
    assert merged["host_sampled"].files_added == merged["host_sampled"].partitions == 1
    assert OFFSETS_TABLE in merged  # the archiver's tables are not partitioned by date: all of it is closed
    assert snapshot(lake) == rows

    results = compact(lake, LakeSettings(compact_after_days=1), today=TODAY, all_dates=True)
    assert all(
        n == 1 for dates in ({t: files_per_date(lake, t) for t in rows}).values() for n in dates.values()
    )
    assert "host_sampled" in {r.table for r in results}
    assert compact(lake, LakeSettings(), today=TODAY, all_dates=True) == []  # nothing left to merge
    assert snapshot(lake) == rows


def test_compaction_and_vacuum_keep_the_versions_a_restart_resumes_from(
    lake: DeltaTables, busy: list[Any]
) -> None:
    ends = next_offsets(busy)
    rows = snapshot(lake)
    rejected = Lake(lake).rejected().collect().height
    compact(lake, LakeSettings(), all_dates=True)
    stale = stored_parquet(lake, "host_sampled")
    assert stale > len(Lake(lake).files("host_sampled")), "the merged files stay for older versions"

    dry = {r.table: r.files_deleted for r in vacuum(lake, 0, dry_run=True)}
    assert dry["host_sampled"] > 0 and stored_parquet(lake, "host_sampled") == stale
    assert {r.table: r.files_deleted for r in vacuum(lake, 168)}["host_sampled"] == 0  # too young to go
    deleted = {r.table: r.files_deleted for r in vacuum(lake, 0)}
    assert deleted == dry
    assert stored_parquet(lake, "host_sampled") == len(Lake(lake).files("host_sampled")) == 2

    fresh = DeltaTables(lake.root)  # a restarted process reads the log anew
    assert snapshot(fresh) == rows
    assert Lake(fresh).rejected().collect().height == rejected
    assert resume_offsets(fresh, GROUP, ends) == ends
    assert fresh.version_of(REJECTED_TABLE, f"{GROUP}:fleet.errors:0") == 1_001


def test_maintenance_takes_the_tables_asked_for(lake: DeltaTables, busy: list[Any]) -> None:
    assert lake_tables(lake, ["HostSampled", "xid_raised", "alert_raised"]) == [
        "host_sampled",
        "xid_raised",
        "alert_raised",
    ]
    assert {OFFSETS_TABLE, REJECTED_TABLE, "host_sampled"} <= set(lake_tables(lake))
    assert "_quarantine/_reports" not in lake_tables(lake)  # nothing was quarantined: no such table
    results = compact(lake, LakeSettings(), tables=["host_sampled"], all_dates=True)
    assert [r.table for r in results] == ["host_sampled"]
    assert files_per_date(lake, "xid_raised")[CLOSED] > 1
    assert [r.table for r in vacuum(lake, 0, tables=["xid_raised"])] == ["xid_raised"]
