"""Other engines read the lake through the Delta log: DuckDB's ``delta_scan`` sees what ``Lake.scan`` sees."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

from analytics.lake.batch import plan_batch
from analytics.lake.layout import QUARANTINE_REPORTS, archiver_tables
from analytics.lake.maintenance import compact, vacuum
from analytics.lake.reader import Lake
from analytics.lake.synthetic import synthetic_records
from ground.delta import DeltaTables
from ground.settings.lake import LakeSettings
from schemas import Codec
from tests.analytics.lake import duck
from tests.analytics.lake.helpers import as_consumed, frontier, garbage


@pytest.fixture
def full(lake: DeltaTables, records: list[dict[str, Any]], publisher_factory) -> DeltaTables:  # type: ignore[no-untyped-def]
    """Every kind of table: data of every event type, a quarantined slice with its report, a reject, offsets."""
    extra = synthetic_records(n_hosts=2, samples_per_host=0, id_prefix="q")
    inventory = [r for r in extra if r["event_type"] == "HostInventoried"]
    ecc = [r for r in extra if r["event_type"] == "EccErrorObserved"]
    bad = [{**ecc[0], "payload": {**ecc[0]["payload"], "count": -1}}, *ecc[1:]]
    publisher_factory(gated=True).publish(plan_batch(as_consumed(inventory + bad, partitions=4), Codec()))
    start = {(tp.topic, tp.partition): n for tp, n in frontier(lake).items()}
    consumed = as_consumed(records, partitions=4, start=start)
    publisher = publisher_factory(frontier=frontier(lake))
    publisher.publish(plan_batch(consumed[:20], Codec()))
    publisher.publish(plan_batch([*consumed[20:], garbage("fleet.dlq", 3, 7)], Codec()))
    return lake


def assert_duckdb_reads_the_same(lake: DeltaTables) -> None:
    con = duck.connect()
    reader = Lake(DeltaTables(lake.root))
    for table in reader.tables():
        ours = reader.scan(table).select("event_id", pl.col("date").cast(pl.String)).collect()
        rows, ids = duck.scan_ids(con, lake.uri(table))
        assert rows == ours.height, table
        assert ids == set(ours.iter_rows()), table
    for table in archiver_tables(reader.tables()):
        found = reader.delta.open(table)
        if found is None:
            continue
        rows = pl.scan_delta(found).select(pl.len()).collect().item()
        assert duck.count(con, lake.uri(table)) == rows, table
    held = reader.quarantined("ecc_error_observed")
    assert held is not None
    quarantined = con.execute(
        "SELECT event_id FROM delta_scan(?)", [lake.uri("_quarantine/ecc_error_observed")]
    ).fetchall()
    assert sorted(r[0] for r in quarantined) == sorted(held.collect().get_column("event_id"))


def test_duckdb_reads_every_table_as_the_lake_does(full: DeltaTables) -> None:
    reader = Lake(full)
    assert len(reader.tables()) == 11 and reader.delta.exists(QUARANTINE_REPORTS)
    assert_duckdb_reads_the_same(full)


def test_duckdb_reads_the_lake_after_compaction_and_vacuum(full: DeltaTables) -> None:
    assert compact(full, LakeSettings(), all_dates=True)
    assert_duckdb_reads_the_same(full)
    assert sum(r.files_deleted for r in vacuum(full, 0)) > 0
    assert_duckdb_reads_the_same(full)
