from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from webhooks import WebhookMetrics, redact_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://user:pw@hooks.example:8443/a/b?token=t#frag", "https://hooks.example:8443/a/b"),
        ("http://127.0.0.1:9099/", "http://127.0.0.1:9099/"),
        ("http://[::1/broken", "<unparseable URL>"),
    ],
)
def test_redact_url_keeps_only_scheme_host_and_path(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_metrics_live_on_their_own_registry() -> None:
    a, b = WebhookMetrics(), WebhookMetrics(CollectorRegistry())
    a.delivered.labels(url="u").inc(2)
    a.delivered.labels(url="v").inc()
    assert a.total(a.delivered) == 3 and b.total(b.delivered) == 0
    assert a.value("fleetpulse_webhook_delivered_total", url="u") == 2
