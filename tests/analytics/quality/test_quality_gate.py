"""The gate passes good batches and names what is wrong with bad ones."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from analytics.lake.synthetic import host_ids
from analytics.quality import QualityGate, validate_batch
from analytics.tables import TABLES
from tests.analytics.lake.helpers import NOW
from tests.analytics.quality.conftest import HOSTS

DAY_MS = 86_400_000


def replace(table: pa.Table, column: str, row: int, value: object) -> pa.Table:
    values = table.column(column).to_pylist()
    values[row] = value
    i = table.schema.get_field_index(column)
    return table.set_column(i, table.schema.field(i), pa.array(values, table.schema.field(i).type))


@pytest.mark.parametrize("table", sorted(TABLES))
def test_good_batches_pass(gate: QualityGate, good: dict[str, pa.Table], table: str) -> None:
    outcome = gate.validate(table, good[table], NOW, HOSTS)
    assert outcome.success, outcome.summary()
    assert outcome.rows == good[table].num_rows and outcome.evaluated > 10


def test_corrupted_batch_fails_with_named_expectations(gate: QualityGate, good: dict[str, pa.Table]) -> None:
    bad = replace(good["ecc_error_observed"], "count", 0, -4)
    bad = replace(bad, "ts", 1, int(NOW.timestamp() * 1000) + DAY_MS)
    bad = replace(bad, "host_id", 2, "h9999")
    outcome = gate.validate("ecc_error_observed", bad, NOW, HOSTS)
    assert not outcome.success
    failed = {(f.expectation, f.column): f for f in outcome.failed}
    assert set(failed) == {
        ("expect_column_values_to_be_between", "count"),
        ("expect_column_values_to_be_between", "ts"),
        ("expect_column_values_to_be_in_set", "host_id"),
    }
    assert failed[("expect_column_values_to_be_between", "count")].sample == (-4,)
    assert failed[("expect_column_values_to_be_in_set", "host_id")].unexpected_count == 1
    assert "h9999" in outcome.summary()
    assert outcome.report["success"] is False and len(outcome.report["failed_expectations"]) == 3


def test_future_tolerance(gate: QualityGate, good: dict[str, pa.Table]) -> None:
    soon = replace(
        good["xid_raised"], "ts", 0, int(NOW.timestamp() * 1000) + 60_000
    )  # a minute ahead: clock skew
    assert gate.validate("xid_raised", soon, NOW, HOSTS).success
    strict = QualityGate(future_tolerance_s=0)
    assert not strict.validate("xid_raised", soon, NOW, HOSTS).success


def test_nested_counters_are_checked(gate: QualityGate, good: dict[str, pa.Table]) -> None:
    samples = good["host_sampled"].to_pylist()
    samples[1]["gpus"][5]["ecc_dbe"] = -1
    bad = pa.Table.from_pylist(samples, schema=good["host_sampled"].schema)
    outcome = gate.validate("host_sampled", bad, NOW, HOSTS)
    assert [(f.expectation, f.column) for f in outcome.failed] == [
        ("expect_column_values_to_be_between", "gpus.ecc_dbe.min")
    ]


def test_duplicate_event_ids_fail(gate: QualityGate, good: dict[str, pa.Table]) -> None:
    dup = replace(good["xid_raised"], "event_id", 1, good["xid_raised"].column("event_id")[0].as_py())
    outcome = gate.validate("xid_raised", dup, NOW, HOSTS)
    assert [f.expectation for f in outcome.failed] == ["expect_column_values_to_be_unique"]


def test_missing_column_fails_the_schema_check(gate: QualityGate, good: dict[str, pa.Table]) -> None:
    outcome = gate.validate(
        "link_event_observed", good["link_event_observed"].drop_columns(["peer"]), NOW, HOSTS
    )
    assert not outcome.success
    assert "expect_table_columns_to_match_set" in {f.expectation for f in outcome.failed}


def test_without_known_hosts_the_host_check_is_skipped(gate: QualityGate, good: dict[str, pa.Table]) -> None:
    stranger = replace(good["xid_raised"], "host_id", 0, "stranger")
    assert not gate.validate("xid_raised", stranger, NOW, HOSTS).success
    assert gate.validate("xid_raised", stranger, NOW, None).success


def test_a_fleet_sized_host_set_reaches_gx_as_the_batch_hosts_it_knows(
    gate: QualityGate, good: dict[str, pa.Table]
) -> None:
    """GX copies a value set many times a run: a fleet's 48,000 hosts made every gate run cost seconds."""
    fleet = set(host_ids(48_000))
    batch = good["xid_raised"]
    passed = gate.validate("xid_raised", batch, NOW, fleet)
    assert passed.success
    assert passed.report["parameters"]["known_hosts"] == sorted(set(batch.column("host_id").to_pylist()))
    stranger = replace(batch, "host_id", 0, "stranger")
    failed = gate.validate("xid_raised", stranger, NOW, fleet)
    assert [(f.column, f.unexpected_count, f.sample) for f in failed.failed] == [
        ("host_id", 1, ("stranger",))
    ]
    assert "stranger" not in failed.report["parameters"]["known_hosts"]
    nobody = gate.validate(
        "xid_raised", batch, NOW, {"elsewhere"}
    )  # no batch host known: GX gets an empty set
    assert [f.unexpected_count for f in nobody.failed] == [batch.num_rows]


def test_polars_and_pandas_inputs(gate: QualityGate, good: dict[str, pa.Table]) -> None:
    frame = pl.from_arrow(good["job_interrupted"])
    assert isinstance(frame, pl.DataFrame)
    assert gate.validate("JobInterrupted", frame, NOW, HOSTS).success
    assert gate.validate("job_interrupted", frame.lazy(), NOW, HOSTS).success
    flat = good["pcie_aer_reported"].to_pandas()
    assert isinstance(flat, pd.DataFrame)
    assert gate.validate("pcie_aer_reported", flat, NOW, HOSTS).success


def test_validate_batch_function_with_epoch_ms_now(gate: QualityGate, good: dict[str, pa.Table]) -> None:
    late = good["alert_raised"]
    now_ms = int(pc.min(late.column("ts")).as_py()) - 1_000_000
    outcome = validate_batch("alert_raised", late, now_ms, gate=gate)
    assert not outcome.success and outcome.now_ms == now_ms
    assert validate_batch("alert_raised", late, NOW, gate=gate).success
    with pytest.raises(ValueError, match="aware"):
        validate_batch("alert_raised", late, dt.datetime(2025, 1, 1), gate=gate)


def test_the_gate_keeps_no_results_of_past_runs(gate: QualityGate, good: dict[str, pa.Table]) -> None:
    """GX stores every run's results in its context and every batch's metrics in its engine; a gate that runs
    for months must keep neither."""
    bad = good["ecc_error_observed"].set_column(
        good["ecc_error_observed"].column_names.index("count"),
        "count",
        pa.array([-1] * good["ecc_error_observed"].num_rows, pa.int32()),
    )
    for _ in range(3):
        gate.validate("host_sampled", good["host_sampled"], NOW)
        gate.validate("ecc_error_observed", bad, NOW)
    context = gate._gx_context()
    assert context.validation_results_store.list_keys() == []
    engine = context.data_sources.get("fleetpulse").get_execution_engine()
    assert len(engine._metric_cache) == 0 and engine.batch_manager.batch_data_cache == {}
