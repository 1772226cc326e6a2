"""Prometheus metrics of the dispatcher, on a registry the caller owns (nothing registers at import)."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from prometheus_client import CollectorRegistry, Counter, Gauge


def redact_url(url: str) -> str:
    """``scheme://host[:port]/path`` only: user info and query strings often carry tokens."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
    except ValueError:  # e.g. a broken IPv6 literal: show nothing that might be a credential
        return "<unparseable URL>"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


class WebhookMetrics:
    """Counters per target (labelled by redacted URL) and the outbox gauges."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self.ingested = Counter(
            "fleetpulse_webhook_alerts_ingested", "Alerts newly written to the outbox", registry=r
        )
        self.skipped = Counter(
            "fleetpulse_webhook_records_skipped",
            "Records on the alerts topic that are not AlertRaised",
            ["reason"],
            registry=r,
        )
        self.delivered = Counter(
            "fleetpulse_webhook_delivered", "Deliveries acknowledged with 2xx", ["url"], registry=r
        )
        self.retries = Counter(
            "fleetpulse_webhook_retries", "Failed attempts scheduled for another try", ["url"], registry=r
        )
        self.failures = Counter(
            "fleetpulse_webhook_failures", "Deliveries given up (dead in the outbox)", ["url"], registry=r
        )
        self.outbox_depth = Gauge(
            "fleetpulse_webhook_outbox_depth", "Pending (alert, URL) deliveries", registry=r
        )
        self.outbox_dead = Gauge(
            "fleetpulse_webhook_outbox_dead", "Dead (alert, URL) deliveries kept for inspection", registry=r
        )

    @staticmethod
    def total(counter: Counter) -> float:
        """A counter summed over all its label values."""
        return sum(
            s.value for metric in counter.collect() for s in metric.samples if s.name.endswith("_total")
        )

    def value(self, name: str, **labels: str) -> float:
        """Current sample value (for tests and the CLI summary); 0 when never set."""
        got = self.registry.get_sample_value(name, labels)
        return got if got is not None else 0.0
