"""Batch planning: every consumed offset lands in exactly one table batch or in the rejected list."""

from __future__ import annotations

from typing import Any

from analytics.lake.batch import plan_batch, rejected_files, split_by_partition, split_files
from analytics.lake.layout import DAY_MS, TopicPartition
from analytics.lake.synthetic import START_MS
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
        "host_inventoried", "host_sampled", "xid_raised", "ecc_error_observed", "pcie_aer_reported",
        "link_event_observed", "job_interrupted", "finding_raised", "maintenance_action_recorded",
        "alert_raised", "record_dead_lettered",
    }  # fmt: skip
    reasons = {r.error_type for r in plan.rejected}
    assert reasons == {"FramingError", "UnknownSchemaError"}
    assert all(r.reason for r in plan.rejected)
    assert plan.ranges[TopicPartition("fleet.errors", 0)].last == 10_001


def test_an_event_delivered_twice_in_a_batch_is_kept_once_and_counted(records: list[dict[str, Any]]) -> None:
    consumed = as_consumed(records + records[:5])  # a producer's retry: the same events at later offsets
    plan = plan_batch(consumed, Codec())
    assert plan.repeats == 5 and plan.records == len(consumed)
    assert sum(t.rows for t in plan.tables.values()) + len(plan.rejected) + plan.repeats == len(consumed)
    ids = [r["event_id"] for t in plan.tables.values() for r in t.arrow().to_pylist()]
    assert len(ids) == len(set(ids)) == len(records)


def test_split_files_by_date_and_partition(records: list[dict[str, Any]]) -> None:
    samples = [r for r in records if r["event_type"] == "HostSampled"]
    samples[0] = {**samples[0], "ts": START_MS - 1}  # previous day
    plan = plan_batch(as_consumed(samples), Codec())
    batch = plan.tables["host_sampled"]
    parts = split_files(batch, batch.arrow())
    assert sum(p.table.num_rows for p in parts) == len(samples)
    assert "2024-12-31" in {p.date for p in parts}
    for part in parts:
        ts = part.table.column("ts").to_pylist()
        assert {t // DAY_MS for t in ts} == {(ts[0] // DAY_MS)}
        offsets = [o for tp, o in batch.sources if tp == part.name.tp]
        assert part.name.first >= min(offsets) and part.name.last <= max(offsets)
    names = [str(p.name) for p in parts]
    assert len(names) == len(set(names)), "file names must be unique within a batch"


def test_split_by_partition_covers_the_batch(records: list[dict[str, Any]]) -> None:
    plan = plan_batch(as_consumed(records), Codec())
    batch = plan.tables["xid_raised"]
    parts = split_by_partition(batch, batch.arrow())
    assert sum(t.num_rows for _, t in parts) == batch.rows
    assert {n.tp for n, _ in parts} == {tp for tp, _ in batch.sources}


def test_rejected_files_keep_bytes_and_reason() -> None:
    consumed = [
        garbage("fleet.samples", 1, 5),
        garbage("fleet.samples", 1, 9),
        garbage("fleet.samples", 0, 2),
    ]
    plan = plan_batch(consumed, Codec())
    files = dict((str(n), t) for n, t in rejected_files(plan.rejected, NOW))
    assert set(files) == {"fleet.samples-p0-o2-2.parquet", "fleet.samples-p1-o5-9.parquet"}
    rows = files["fleet.samples-p1-o5-9.parquet"].to_pylist()
    assert [r["offset"] for r in rows] == [5, 9]
    assert rows[0]["value"] == b"\x07not avro"
    assert "magic byte" in rows[0]["reason"]


def test_large_batches_are_converted_in_chunks_in_order() -> None:
    from analytics.lake.synthetic import synthetic_records

    samples = [
        r for r in synthetic_records(n_hosts=5, samples_per_host=50) if r["event_type"] == "HostSampled"
    ]
    plan = plan_batch(as_consumed(samples, partitions=1), Codec(), chunk_rows=60)
    batch = plan.tables["host_sampled"]
    assert len(batch.chunks) == len(samples) // 60
    arrow = batch.arrow()
    assert arrow.column("event_id").to_pylist() == [r["event_id"] for r in samples]
    assert [o for _, o in batch.sources] == list(range(len(samples)))
