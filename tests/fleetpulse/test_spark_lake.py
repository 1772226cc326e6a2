"""Apache Spark reads the Delta lake and answers like the Polars jobs (issue 17).

One SparkSession for the module: starting it takes seconds. The lake is written with
``deltalake`` in the archiver's layout: a Delta table per event type, partitioned by the UTC
``date`` of ``ts``. ``write_lake`` is the one place to swap for the real lake writer.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from deltalake import write_deltalake
from polars.testing import assert_frame_equal

from analytics.jobs.fabric import METRICS, QUANTILES, sample_percentiles
from analytics.lake.synthetic import HOUR_MS, START_MS, synthetic_records
from analytics.tables import TABLES, event_type_of
from fleetpulse.maven import ToolMissingError
from fleetpulse.spark import spark_sql
from ground.delta import with_date
from schemas.arrow import table_name, table_schema, to_table

pytestmark = [pytest.mark.slow, pytest.mark.same_worker]  # one Spark session for both tests

N_HOSTS = 300
SAMPLES_PER_HOST = 12
DAYS = 3
DAY_MS = 24 * HOUR_MS
# A tiny lake and a short run: adaptive execution's extra jobs and Delta's default 50 log-replay
# tasks cost more than they save, and the JVM's optimising JIT compiler took half its CPU time.
SMALL_LAKE_CONF = {
    "spark.sql.adaptive.enabled": "false",
    "spark.databricks.delta.snapshotPartitions": "1",
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
}
# The two the fabric job reads, plus one of each column type the other tables add (bool, map,
# nullable double, binary): reading a Delta table costs Spark about 2 s here, whatever its size.
LAKE_TABLES = (
    "host_inventoried",
    "host_sampled",
    "ecc_error_observed",
    "finding_raised",
    "record_dead_lettered",
)


def lake_records() -> list[dict[str, Any]]:
    """Every event type for a few hundred hosts over three days; sample bandwidth varied
    (the synthetic set keeps it constant, which would make its percentiles trivially equal)."""
    records = synthetic_records(N_HOSTS, SAMPLES_PER_HOST, span_ms=DAYS * DAY_MS, seed=17)
    rng = random.Random(17)
    for record in records:
        if record["event_type"] == "HostSampled":
            record["payload"]["bus_bw_gbps"] = 280.0 + rng.random() * 120.0
    return records


def write_lake(root: Path, records: Sequence[dict[str, Any]], batches: int = 2) -> dict[str, Path]:
    """Append each event type to ``root/<table>`` as a date-partitioned Delta table, in a few commits."""
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_type[record["event_type"]].append(record)
    paths: dict[str, Path] = {}
    for event_type, rows in sorted(by_type.items()):
        name = table_name(event_type)
        schema = table_schema(event_type_of(name))
        for batch in range(batches):
            part = rows[batch::batches]
            if part:
                table = with_date(to_table(event_type, part, schema))
                write_deltalake(root / name, table, mode="append", partition_by=["date"])
        paths[name] = root / name
    return paths


def fabric_percentiles_sql(samples: Path, inventory: Path) -> str:
    """``analytics.jobs.fabric.sample_percentiles`` in Spark SQL (``percentile`` interpolates linearly)."""
    aggregates = ["count(*) AS samples", "count(DISTINCT s.host_id) AS hosts"]
    for metric in METRICS:
        aggregates += [f"percentile(s.{metric}, {q}) AS {metric}_p{round(q * 100)}" for q in QUANTILES]
        aggregates.append(f"avg(s.{metric}) AS {metric}_mean")
    return (
        f"SELECT i.fabric, {', '.join(aggregates)} "
        f"FROM delta.`{samples}` s JOIN delta.`{inventory}` i ON s.host_id = i.host_id "
        "GROUP BY i.fabric ORDER BY i.fabric"
    )


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    records = [r for r in lake_records() if table_name(r["event_type"]) in LAKE_TABLES]
    return write_lake(tmp_path_factory.mktemp("lake"), records)


@pytest.fixture(scope="module")
def spark_results(lake: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, pl.DataFrame]:
    """Every table read whole and the fabric query, in one Spark session (a child process with the cached pyspark)."""
    queries = {name: f"SELECT * FROM delta.`{path}`" for name, path in lake.items()}
    queries["fabric"] = fabric_percentiles_sql(lake["host_sampled"], lake["host_inventoried"])
    try:
        paths = spark_sql(
            queries, tmp_path_factory.mktemp("spark"), conf=SMALL_LAKE_CONF, driver_memory="768m"
        )
    except ToolMissingError as exc:  # no java: Spark cannot run here at all
        pytest.skip(str(exc))
    return {name: pl.read_parquet(path) for name, path in paths.items()}


def test_spark_reads_every_row_as_polars_does(
    lake: dict[str, Path], spark_results: dict[str, pl.DataFrame]
) -> None:
    assert set(lake) == set(LAKE_TABLES) <= set(TABLES)
    for name, path in lake.items():
        want = pl.scan_delta(str(path)).collect().sort("event_id")
        got = spark_results[name].select(want.columns).sort("event_id")
        assert got.height == want.height, name
        assert got.get_column("event_id").n_unique() == got.height, name
        # every column, nested ones included: float32, lists of structs, maps, bytes, the date partition
        assert_frame_equal(got, want, check_dtypes=False)
    first = datetime.fromtimestamp(START_MS / 1000, UTC).date()
    dates = sorted(set(spark_results["host_sampled"].get_column("date").to_list()))
    assert dates == [first + timedelta(days=d) for d in range(DAYS)]


def test_fabric_percentiles_in_spark_sql_equal_the_polars_job(
    lake: dict[str, Path], spark_results: dict[str, pl.DataFrame]
) -> None:
    samples, inventory = lake["host_sampled"], lake["host_inventoried"]
    want = sample_percentiles(pl.scan_delta(str(samples)), pl.scan_delta(str(inventory))).collect()
    got = spark_results["fabric"]
    assert got.columns == want.columns
    assert got.get_column("fabric").to_list() == want.get_column("fabric").to_list() == ["infiniband", "roce"]
    assert got.get_column("samples").sum() == N_HOSTS * SAMPLES_PER_HOST
    for spark_row, polars_row in zip(got.to_dicts(), want.to_dicts(), strict=True):
        for column, value in polars_row.items():
            if isinstance(value, float):
                assert spark_row[column] == pytest.approx(value, rel=1e-6, abs=0.0), column
            else:
                assert spark_row[column] == value, column
