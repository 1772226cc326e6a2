"""HTTP API of a detect worker (Faust web views): host state, open work, domain budgets, health, /metrics.

Every worker folds the whole ``fleet.actions`` log, so any worker answers for the whole fleet.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from faust.web import Request, Response, View
from prometheus_client import CONTENT_TYPE_LATEST

from streams.lifecycle import describe_host

if TYPE_CHECKING:
    from streams.app import DetectApp


def health(detect: DetectApp) -> dict[str, Any]:
    app = detect.app
    assigned: list[str] = []
    consumer = getattr(app, "_consumer", None)
    if consumer is not None:
        assigned = sorted(f"{tp.topic}[{tp.partition}]" for tp in consumer.assignment())
    assigned = sorted(assigned + detect.samples_stage.assignment())
    ready = detect.inventory_tailer.started and detect.actions_tailer.started
    return {
        "status": "ok" if ready else "starting",
        "app_id": detect.settings.detect.app_id,
        "watermark_ms": detect.watermark,
        "hosts_in_inventory": len(detect.inventory.hosts),
        "actions_applied": detect.fleet.count,
        "assigned": assigned,
        "idle": detect.samples_stage.idle_partitions(),
    }


def open_work(detect: DetectApp) -> list[dict[str, Any]]:
    """Hosts with an operation in progress or waiting (the open findings and their actions)."""
    return [describe_host(h) for _, h in sorted(detect.fleet.hosts.items()) if h.has_failure]


def budgets(detect: DetectApp) -> list[dict[str, Any]]:
    domains = sorted(set(detect.inventory.domains()) | set(detect.fleet.domains))
    return [asdict(detect.planner.budgets(detect.fleet, d, detect.inventory.domain_size(d))) for d in domains]


def register_views(detect: DetectApp) -> None:
    app = detect.app

    @app.page("/health")
    async def health_view(self: View, request: Request) -> Response:
        return self.json(health(detect))

    @app.page("/hosts")
    async def hosts_view(self: View, request: Request) -> Response:
        return self.json([describe_host(h) for _, h in sorted(detect.fleet.hosts.items())])

    @app.page("/hosts/{host_id}")
    async def host_view(self: View, request: Request, host_id: str) -> Response:
        host = detect.fleet.hosts.get(host_id)
        info = detect.inventory.hosts.get(host_id)
        if host is None and info is None:
            return self.json({"error": f"unknown host {host_id}"}, status=404)
        body: dict[str, Any] = describe_host(host) if host else {"host_id": host_id, "status": "in_service"}
        if info is not None:
            body["inventory"] = asdict(info)
        return self.json(body)

    @app.page("/findings")
    async def findings_view(self: View, request: Request) -> Response:
        return self.json(open_work(detect))

    @app.page("/domains")
    async def domains_view(self: View, request: Request) -> Response:
        return self.json(budgets(detect))

    @app.page("/metrics")
    async def metrics_view(self: View, request: Request) -> Response:
        return self.bytes(detect.metrics.exposition(), content_type=CONTENT_TYPE_LATEST.split(";")[0])
