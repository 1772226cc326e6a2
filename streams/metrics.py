"""Prometheus metrics of one detect worker, in their own registry (nothing registers at import time)."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

LagSource = Callable[[], Iterable[tuple[str, int, int]]]  # (topic, partition, lag)
# Distinct clusters kept as label values; later ones share "other". A label is a time series
# each, and cluster names come from events: forged ones must not grow the registry without end.
MAX_CLUSTER_LABELS = 512
OTHER_CLUSTERS = "other"


class _LagCollector(Collector):
    def __init__(self, source: LagSource) -> None:
        self.source = source

    def collect(self) -> Iterable[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            "fleetpulse_detect_consumer_lag",
            "Records behind the high watermark",
            labels=["topic", "partition"],
        )
        for topic, partition, lag in self.source():
            family.add_metric([topic, str(partition)], lag)
        yield family


class DetectMetrics:
    """Counters and gauges the agents update; ``exposition()`` renders /metrics."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.events = Counter(
            "fleetpulse_detect_events", "Records consumed", ["topic", "event_type"], registry=r
        )
        self.dead_letters = Counter(
            "fleetpulse_detect_dead_letters", "Records sent to the DLQ", ["topic", "reason"], registry=r
        )
        self.late = Counter(
            "fleetpulse_detect_late_events", "Events dropped as too late", ["stage"], registry=r
        )
        self.findings = Counter(
            "fleetpulse_detect_findings", "Findings raised", ["detector", "rule"], registry=r
        )
        self.actions = Counter(
            "fleetpulse_detect_actions", "Maintenance actions recorded", ["kind"], registry=r
        )
        self.alerts = Counter("fleetpulse_detect_alerts", "Alerts raised", ["alertname"], registry=r)
        self.busy = Counter(
            "fleetpulse_detect_busy_seconds",
            "Time spent in each agent's own work (excl. waiting)",
            ["agent"],
            registry=r,
        )
        self.handled = Counter(
            "fleetpulse_detect_handled", "Messages handled per agent", ["agent"], registry=r
        )
        self.windows = Counter(
            "fleetpulse_detect_windows_closed", "Cluster windows scored", ["cluster"], registry=r
        )
        self.rate = Gauge(
            "fleetpulse_detect_events_per_second", "Records consumed per second (last 10 s)", registry=r
        )
        self.watermark = Gauge(
            "fleetpulse_detect_watermark_ms", "Newest event time seen by this worker", registry=r
        )
        self._clusters: set[str] = set()
        self._clock = clock
        self._ticks: deque[tuple[float, int]] = deque()
        self._consumed = 0

    def windows_closed(self, cluster: str, n: int) -> None:
        """Count scored windows per cluster, at most ``MAX_CLUSTER_LABELS`` clusters by name."""
        if cluster not in self._clusters:
            if len(self._clusters) >= MAX_CLUSTER_LABELS:
                cluster = OTHER_CLUSTERS
            else:
                self._clusters.add(cluster)
        self.windows.labels(cluster).inc(n)

    def consumed(self, topic: str, event_type: str, n: int = 1) -> None:
        self.events.labels(topic, event_type).inc(n)
        self._consumed += n

    def sample_rate(self) -> float:
        """Update the events/s gauge from the running count (called periodically)."""
        now = self._clock()
        self._ticks.append((now, self._consumed))
        while len(self._ticks) > 1 and self._ticks[0][0] < now - 10.0:
            self._ticks.popleft()
        (t0, c0), (t1, c1) = self._ticks[0], self._ticks[-1]
        value = (c1 - c0) / (t1 - t0) if t1 > t0 else 0.0
        self.rate.set(value)
        return value

    def add_lag_source(self, source: LagSource) -> None:
        self.registry.register(_LagCollector(source))

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
