"""Every metric name fleetpulse's parts export, from their registries (what a scrape of each would list)."""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import CollectorRegistry
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

from analytics.lake.metrics import ArchiverMetrics
from producers.agent.metrics import AgentCollector
from streams.core.fleet.lifecycle import FleetState
from streams.fleet_metrics import FleetCollector, FleetView
from streams.metrics import DetectMetrics
from webhooks.metrics import WebhookMetrics

SUFFIXES = {"counter": ("_total", "_created"), "histogram": ("_bucket", "_count", "_sum", "_created")}


class _Spool:
    bytes = 0

    def __len__(self) -> int:
        return 0

    def dropped(self) -> dict[str, int]:
        return {"samples": 0, "faults": 0}


class _Sender:
    delivered = 0
    last_delivered_s: float | None = 0.0


class _Problems:
    counts: dict[tuple[str, str], int] = {}


def registries() -> dict[str, CollectorRegistry]:
    """One registry per part, built the way the part builds it."""
    detect = DetectMetrics()
    detect.registry.register(FleetCollector(lambda: FleetView(FleetState(), [])))
    detect.add_lag_source(lambda: [("fleet.errors", 0, 0)])
    agent = CollectorRegistry()
    agent.register(AgentCollector(_Spool(), _Sender(), _Problems(), lambda: 0))
    return {
        "detector": detect.registry,
        "dispatcher": WebhookMetrics().registry,
        "archiver": ArchiverMetrics().registry,
        "agent": agent,
    }


def sample_names(families: Iterable[Metric]) -> set[str]:
    """Sample names a query can use: a family's name with its type's suffixes."""
    return {family.name + s for family in families for s in SUFFIXES.get(family.type, ("",))}


def exported_names() -> set[str]:
    """What the parts' registries export, built in-process."""
    return sample_names(family for registry in registries().values() for family in registry.collect())


def scraped_names(texts: Iterable[str]) -> set[str]:
    """What scrapes (Prometheus text format pages) hold, whatever part served them."""
    return sample_names(family for text in texts for family in text_string_to_metric_families(text))
