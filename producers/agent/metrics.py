"""Prometheus metrics of a host agent, read at scrape time from its spool and sender (nothing registers at import).

Spool depth and drops are what an operator alerts on: a growing spool means the broker is out of
reach, drops mean the spool's bound was hit and samples (then faults) were lost. The drop counts
live in the spool file, so they survive restarts like the events they count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Protocol

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector


class SpoolLike(Protocol):
    bytes: int

    def __len__(self) -> int: ...

    def dropped(self) -> dict[str, int]: ...


class Delivering(Protocol):
    """The sender's running count and the time of its last acknowledged batch."""

    delivered: int
    last_delivered_s: float | None


class ProblemCounts(Protocol):
    @property
    def counts(self) -> Mapping[tuple[str, str], int]: ...


class AgentCollector(Collector):
    """Spool depth (events, bytes), drops by kind, events emitted and delivered, problems, the last delivery's time."""

    def __init__(
        self, spool: SpoolLike, sender: Delivering, problems: ProblemCounts, emitted: Callable[[], int]
    ) -> None:
        self.spool, self.sender, self.problems, self.emitted = spool, sender, problems, emitted

    def collect(self) -> Iterator[Metric]:
        depth = GaugeMetricFamily(
            "fleetpulse_agent_spool_events", "Events spooled on disk, not yet delivered"
        )
        depth.add_metric([], len(self.spool))
        yield depth
        size = GaugeMetricFamily("fleetpulse_agent_spool_bytes", "Encoded size of the spooled events")
        size.add_metric([], self.spool.bytes)
        yield size
        dropped = CounterMetricFamily(
            "fleetpulse_agent_spool_dropped_events",
            "Events dropped at the spool's size bound",
            labels=["kind"],
        )
        for kind, n in sorted(self.spool.dropped().items()):
            dropped.add_metric([kind], n)
        yield dropped
        for name, doc, value in (
            ("fleetpulse_agent_events_emitted", "Events the collectors produced", self.emitted()),
            ("fleetpulse_agent_events_delivered", "Events the broker acknowledged", self.sender.delivered),
        ):
            family = CounterMetricFamily(name, doc)
            family.add_metric([], value)
            yield family
        problems = CounterMetricFamily(
            "fleetpulse_agent_problems",
            "Bad input, unreadable sources and failed sends, by source and kind",
            labels=["source", "kind"],
        )
        for (source, kind), n in sorted(self.problems.counts.items()):
            problems.add_metric([source, kind], n)
        yield problems
        last = self.sender.last_delivered_s
        if last is not None:
            stamp = GaugeMetricFamily(
                "fleetpulse_agent_last_delivery_timestamp_seconds",
                "Wall-clock time of the last acknowledged batch",
            )
            stamp.add_metric([], last)
            yield stamp
