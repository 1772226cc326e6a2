"""Batch planning: every consumed offset lands in exactly one table batch, the rejected list or the repeats."""

from __future__ import annotations

from typing import Any

import pytest

from analytics.lake.batch import TIMESTAMP_OUT_OF_RANGE, plan_batch
from analytics.lake.layout import TopicPartition
from analytics.lake.records import rejected_table
from analytics.lake.synthetic import synthetic_records
from schemas import Codec
from tests.analytics.lake.helpers import NOW, as_consumed, garbage


def test_plan_groups_by_table_and_keeps_every_offset(records: list[dict[str, Any]]) -> None:
    consumed = as_consumed(records)
    consumed.append(garbage("fleet.errors", 0, 10_000))
    consumed.append(garbage("fleet.errors", 0, 10_001, value=None))
    consumed.append(garbage("fleet.errors", 1, 10_000, value=b"\x00\x00\x00\x03\xe7rest"))
    plan = plan_batch(consumed, Codec())
    decoded = sum(t.rows for t in plan.tables.values())
    assert decoded + len(plan.rejected) == len(consumed) == plan.records
    assert decoded == len(records)
    assert set(plan.tables) == {
        "host_inventoried",
        "host_sampled",
        "xid_raised",
        "ecc_error_observed",
        "pcie_aer_reported",
        "link_event_observed",
        "job_interrupted",
        "finding_raised",
        "maintenance_action_recorded",
        "alert_raised",
        "record_dead_lettered",
    }
    reasons = {r.error_type for r in plan.rejected}
    assert reasons == {"FramingError", "UnknownSchemaError"}
    assert all(r.reason for r in plan.rejected)
    assert plan.ranges[TopicPartition("fleet.errors", 0)].last == 10_001


def test_every_row_knows_its_partition_and_offset(records: list[dict[str, Any]]) -> None:
    """``sources`` is what lets each table skip on a replay the rows it already holds."""
    consumed = as_consumed(records)
    plan = plan_batch(consumed, Codec())
    by_id = {r["event_id"]: (c.tp, c.offset) for r, c in zip(records, consumed, strict=True)}
    for batch in plan.tables.values():
        ids = batch.arrow().column("event_id").to_pylist()
        assert [by_id[i] for i in ids] == batch.sources
        for tp, (first, last) in batch.coverage().items():
            offsets = [o for t, o in batch.sources if t == tp]
            assert (first, last) == (min(offsets), max(offsets))
            assert plan.ranges[tp].first <= first <= last <= plan.ranges[tp].last


def test_an_event_delivered_twice_in_a_batch_is_kept_once_and_counted(records: list[dict[str, Any]]) -> None:
    consumed = as_consumed(records + records[:5])  # a producer's retry: the same events at later offsets
    plan = plan_batch(consumed, Codec())
    assert plan.repeats == 5 and plan.records == len(consumed)
    assert sum(t.rows for t in plan.tables.values()) + len(plan.rejected) + plan.repeats == len(consumed)
    ids = [r["event_id"] for t in plan.tables.values() for r in t.arrow().to_pylist()]
    assert len(ids) == len(set(ids)) == len(records)


def test_off_calendar_event_time_is_rejected_while_planning(records: list[dict[str, Any]]) -> None:
    xids = [r for r in records if r["event_type"] == "XidRaised"]
    micro = {**xids[1], "ts": xids[1]["ts"] * 1000}  # microseconds sent as milliseconds
    plan = plan_batch(as_consumed([xids[0], micro, *xids[2:]], partitions=1), Codec())
    assert [r.error_type for r in plan.rejected] == [TIMESTAMP_OUT_OF_RANGE]
    assert str(micro["ts"]) in plan.rejected[0].reason
    assert plan.tables["xid_raised"].rows == len(xids) - 1


def test_rejected_rows_keep_bytes_reason_and_offsets() -> None:
    consumed = [
        garbage("fleet.samples", 1, 5),
        garbage("fleet.samples", 1, 9),
        garbage("fleet.samples", 0, 2, value=None),
    ]
    plan = plan_batch(consumed, Codec())
    rows = rejected_table(plan.rejected, NOW).to_pylist()
    assert [(r["partition"], r["offset"]) for r in rows] == [(1, 5), (1, 9), (0, 2)]
    assert rows[0]["value"] == b"\x07not avro" and rows[2]["value"] is None
    assert "magic byte" in rows[0]["reason"]
    assert {r["rejected_at"] for r in rows} == {NOW}
    assert plan.ranges[TopicPartition("fleet.samples", 1)] == (5, 9, 2)


@pytest.mark.parametrize("columnar", [True, False])
def test_large_batches_are_converted_in_chunks_in_order(columnar: bool) -> None:
    samples = [
        r for r in synthetic_records(n_hosts=5, samples_per_host=50) if r["event_type"] == "HostSampled"
    ]
    plan = plan_batch(as_consumed(samples, partitions=1), Codec(), chunk_rows=60, columnar=columnar)
    batch = plan.tables["host_sampled"]
    pending = [len(batch.records)] if batch.records else []
    assert [c.num_rows for c in batch.chunks] + pending == [60, 60, 60, 60, 10]
    arrow = batch.arrow()
    assert arrow.column("event_id").to_pylist() == [r["event_id"] for r in samples]
    assert [o for _, o in batch.sources] == list(range(len(samples)))
