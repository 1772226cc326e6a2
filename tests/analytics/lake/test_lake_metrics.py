"""The archiver's metrics after real flushes into a test lake (no Kafka: the publisher's side)."""

from __future__ import annotations

from typing import Any

from analytics.lake.archiver import ArchiveStats
from analytics.lake.batch import plan_batch
from analytics.lake.metrics import ArchiverMetrics
from schemas import Codec
from tests.analytics.lake.helpers import as_consumed


def test_a_flush_counts_rows_duplicates_lag_and_its_time(
    records: list[dict[str, Any]], publisher_factory
) -> None:  # type: ignore[no-untyped-def]
    consumed = as_consumed(records + records[:2])  # two records delivered twice
    plan = plan_batch(consumed, Codec())
    done = publisher_factory().publish(plan)
    metrics = ArchiverMetrics(clock=lambda: 1_700_000_000.0)
    assert metrics.registry.get_sample_value("fleetpulse_archiver_rows_total", {"outcome": "published"}) == 0
    metrics.observe(done, ArchiveStats(lag=42, last_flush_s=0.3))
    value = metrics.registry.get_sample_value
    assert value("fleetpulse_archiver_flushes_total") == 1
    assert value("fleetpulse_archiver_rows_total", {"outcome": "published"}) == len(records)
    assert value("fleetpulse_archiver_duplicate_records_total") == 2
    assert value("fleetpulse_archiver_records_total") == len(records) + 2
    assert value("fleetpulse_archiver_lag_records") == 42
    assert value("fleetpulse_archiver_last_flush_timestamp_seconds") == 1_700_000_000.0
    assert value("fleetpulse_archiver_flush_duration_seconds_count") == 1
    assert value("fleetpulse_archiver_flush_duration_seconds_bucket", {"le": "0.5"}) == 1
    assert value("fleetpulse_archiver_flush_duration_seconds_bucket", {"le": "0.25"}) == 0


def test_an_unknown_lag_keeps_the_last_one(records: list[dict[str, Any]], publisher_factory) -> None:  # type: ignore[no-untyped-def]
    metrics = ArchiverMetrics()
    publisher = publisher_factory()
    consumed = as_consumed(records)
    metrics.observe(publisher.publish(plan_batch(consumed[:4], Codec())), ArchiveStats(lag=7))
    metrics.observe(publisher.publish(plan_batch(consumed[4:], Codec())), ArchiveStats(lag=None))
    assert metrics.registry.get_sample_value("fleetpulse_archiver_lag_records") == 7
    assert metrics.registry.get_sample_value("fleetpulse_archiver_flushes_total") == 2
