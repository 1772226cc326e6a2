"""Prometheus metrics of the archiver, on a registry the caller owns (nothing registers at import).

Updated once per flush from what the flush wrote (``observe`` is an ``Archiver.run`` ``on_batch``):
lag after the flush, rows by outcome, the flush's duration and when it ended, for "lag growing"
and "archiver stalled" alerts.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from analytics.lake.archiver import ArchiveStats
from analytics.lake.publish import PublishedBatch

FLUSH_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class ArchiverMetrics:
    """Flushes, rows by outcome, lag and the last flush's time."""

    def __init__(
        self, registry: CollectorRegistry | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self.clock = clock
        r = self.registry
        self.flushes = Counter("fleetpulse_archiver_flushes", "Batches flushed into the lake", registry=r)
        self.records = Counter(
            "fleetpulse_archiver_records", "Kafka records consumed and flushed", registry=r
        )
        self.rows = Counter(
            "fleetpulse_archiver_rows",
            "Rows of flushed batches by outcome (published, quarantined, rejected, replayed)",
            ["outcome"],
            registry=r,
        )
        self.duplicates = Counter(
            "fleetpulse_archiver_duplicate_records",
            "Records seen twice in a batch (same event id), kept once",
            registry=r,
        )
        self.flush_seconds = Histogram(
            "fleetpulse_archiver_flush_duration_seconds",
            "Time to write one batch into the lake",
            buckets=FLUSH_BUCKETS,
            registry=r,
        )
        self.last_flush = Gauge(
            "fleetpulse_archiver_last_flush_timestamp_seconds",
            "Wall-clock time the last flush ended",
            registry=r,
        )
        self.lag = Gauge(
            "fleetpulse_archiver_lag_records", "Records behind the end of the archived partitions", registry=r
        )
        for outcome in ("published", "quarantined", "rejected", "replayed"):
            self.rows.labels(outcome)  # present at 0 before the first flush: rate() needs a start

    def observe(self, done: PublishedBatch, stats: ArchiveStats) -> None:
        """Record one flush (``stats`` are the run's totals after it)."""
        self.flushes.inc()
        self.records.inc(done.plan.records)
        self.duplicates.inc(done.plan.repeats)
        for outcome, n in (
            ("published", done.published_rows),
            ("quarantined", done.quarantined_rows),
            ("rejected", done.rejected_rows),
            ("replayed", done.replayed_rows),
        ):
            self.rows.labels(outcome).inc(n)
        self.flush_seconds.observe(stats.last_flush_s)
        self.last_flush.set(self.clock())
        if stats.lag is not None:
            self.lag.set(stats.lag)
