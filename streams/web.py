"""HTTP API of a detect worker (Faust web views): host state, open work, domain budgets, health, /metrics.

Every worker folds the whole ``fleet.actions`` log, so any worker answers for the whole fleet.
``POST /ops/events`` takes operators' steps (ticket systems, node controllers) with the bearer
token of ``detect.ops_token`` and puts them on that log; without the token it refuses.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any

import faust
from aiohttp import web
from faust.web import Request, Response, View
from prometheus_client import CONTENT_TYPE_LATEST

from schemas import EncodeError
from streams.actions_input import ActionsInput
from streams.core.fleet.lifecycle import HostState, Operation
from streams.core.inventory import Inventory
from streams.fleet_reads import FleetReads
from streams.http_auth import authorized_body
from streams.intake import Intake
from streams.metrics import DetectMetrics
from streams.operator_events import MAX_STEP_BYTES, StepError, operator_record, parse_step_body
from streams.samples import SamplesStage
from streams.tailer import WorkerLogs
from streams.trains.web import TrainsInput, host_versions, register_train_views

log = logging.getLogger(__name__)


def describe_host(host: HostState) -> dict[str, Any]:
    """A JSON-friendly view of one host for the API."""

    def op_view(op: Operation) -> dict[str, Any]:
        return {
            "op_id": op.op_id,
            "operation": op.operation,
            "phase": op.phase,
            "finding_id": op.finding_id,
            "rule": op.rule,
            "suspected_ts": op.suspected_ts,
            "started_ts": op.started_ts,
        }

    return {
        "host_id": host.host_id,
        "cluster": host.cluster,
        "maintenance_domain": host.domain,
        "status": host.status,
        "current": op_view(host.current) if host.current else None,
        "waiting": [op_view(op) for op in host.waiting],
        "completed_operations": host.completed,
        "last_ts": host.last_ts,
    }


@dataclass(frozen=True)
class WorkerStatus:
    """What ``/health`` reports beyond the fleet: the partitions this worker holds (its Faust consumer's
    and its samples stage's), whether its logs are read, and its watermark."""

    app: faust.App
    app_id: str
    intake: Intake
    logs: WorkerLogs
    samples_stage: SamplesStage


def health(status: WorkerStatus, reads: FleetReads) -> dict[str, Any]:
    assigned: list[str] = []
    consumer = getattr(status.app, "_consumer", None)
    if consumer is not None:
        assigned = sorted(f"{tp.topic}[{tp.partition}]" for tp in consumer.assignment())
    stage = status.samples_stage
    assigned = sorted(assigned + stage.assignment())
    return {
        "status": "ok" if status.logs.planner_ready else "starting",
        "app_id": status.app_id,
        "watermark_ms": status.intake.watermark,
        "hosts_in_inventory": len(reads.inventory.hosts),
        "actions_applied": reads.fleet.count,
        "assigned": assigned,
        "idle": stage.idle_partitions(),
        "samples_stage_restarts": stage.restarts,
    }


def open_work(reads: FleetReads) -> list[dict[str, Any]]:
    """Hosts with an operation in progress or waiting (the open findings and their actions)."""
    return [describe_host(h) for _, h in sorted(reads.fleet.hosts.items()) if h.has_failure]


def budgets(reads: FleetReads) -> list[dict[str, Any]]:
    fleet, inventory = reads.fleet, reads.inventory
    domains = sorted(set(inventory.domains()) | set(fleet.domains))
    return [asdict(reads.planner.budgets(fleet, d, inventory.domain_size(d))) for d in domains]


def repair_times(reads: FleetReads) -> list[dict[str, Any]]:
    """Measured time out per cause (from incidents and operators' steps), and per operation kind what
    the planner draws its repair times from (a reset, under ``reset_within``, being no repair)."""
    return [asdict(s) for s in reads.fleet.outages.repair_stats(reads.reset_within)]


@dataclass(frozen=True)
class OperatorSteps:
    """What ``POST /ops/events`` uses: the inventory (a step's cluster) and where the step is written."""

    actions: ActionsInput
    inventory: Inventory


async def record_operator_step(
    steps: OperatorSteps, headers: Any, read_body: Callable[[], Awaitable[bytes]]
) -> tuple[int, dict[str, Any]]:
    """(status, JSON body) for a POSTed operator step: the token first, a body of at most
    ``MAX_STEP_BYTES`` (``streams.http_auth``); a bad step is a 400."""
    body = await authorized_body(steps.actions.token, headers, read_body, MAX_STEP_BYTES)
    if isinstance(body, tuple):
        return body
    now_ms = int(time.time() * 1000)
    try:
        step = parse_step_body(body, now_ms)
        info = steps.inventory.hosts.get(step.host_id)
        record = operator_record(step, cluster=info.cluster if info else "-", now_ms=now_ms)
        value = steps.actions.codec.encode(record)
    except (StepError, EncodeError) as exc:
        return 400, {"error": f"not an operator step: {exc}"}
    await steps.actions.send(step.host_id.encode(), value)  # acknowledged before the caller is told so
    return 202, {"event_id": record["event_id"], "known_host": info is not None}


async def answer_operator_post(steps: OperatorSteps, request: web.Request) -> tuple[int, dict[str, Any]]:
    """The answer to ``POST /ops/events``: never a 500, one log line for every refusal."""
    try:
        status, body = await record_operator_step(
            steps, request.headers, request.read
        )  # capped: client_max_size
    except Exception as exc:  # the broker, mostly: one line, no traceback; the caller may retry
        log.warning("POST /ops/events: cannot record the step: %s: %s", type(exc).__name__, exc)
        return 503, {"error": "cannot record the step now; retry later"}
    if status >= 400:
        log.info("POST /ops/events: refused (%d): %s", status, body["error"])
    return status, body


class OpsEvents(View):
    steps: OperatorSteps

    async def post(self, request: Request, **kwargs: Any) -> Response:
        status, body = await answer_operator_post(self.steps, request)  # type: ignore[arg-type]  # aiohttp's
        return self.json(body, status=status)


def register_views(
    app: faust.App,
    reads: FleetReads,
    status: WorkerStatus,
    actions: ActionsInput,
    metrics: DetectMetrics,
) -> None:
    """The JSON views on ``app``: the fleet's from ``reads``, health from ``status``, operator steps and
    campaign steps written through ``actions``, ``/metrics`` from ``metrics``."""

    @app.page("/health")
    async def health_view(self: View, request: Request) -> Response:
        return self.json(health(status, reads))

    @app.page("/hosts")
    async def hosts_view(self: View, request: Request) -> Response:
        return self.json([describe_host(h) for _, h in sorted(reads.fleet.hosts.items())])

    @app.page("/hosts/{host_id}")
    async def host_view(self: View, request: Request, host_id: str) -> Response:
        fleet = reads.fleet
        host = fleet.hosts.get(host_id)
        info = reads.inventory.hosts.get(host_id)
        if host is None and info is None:
            return self.json({"error": f"unknown host {host_id}"}, status=404)
        body: dict[str, Any] = describe_host(host) if host else {"host_id": host_id, "status": "in_service"}
        body["out_for"] = [asdict(o) for o in fleet.outages.open_at(host_id, fleet.clock)]
        if info is not None:
            body["inventory"] = asdict(info)
        body["versions"] = host_versions(reads, host_id)
        return self.json(body)

    @app.page("/findings")
    async def findings_view(self: View, request: Request) -> Response:
        """Every finding raised in the fleet (``?host=`` for one host's), oldest first."""
        host = request.query.get("host")
        return self.json(reads.findings_log.view(reads.fleet.findings, host_id=host))

    @app.page("/work")
    async def work_view(self: View, request: Request) -> Response:
        """Hosts with an operation in progress or waiting."""
        return self.json(open_work(reads))

    @app.page("/domains")
    async def domains_view(self: View, request: Request) -> Response:
        return self.json(budgets(reads))

    @app.page("/repair-times")
    async def repair_times_view(self: View, request: Request) -> Response:
        return self.json(repair_times(reads))

    steps = OperatorSteps(actions, reads.inventory)
    app.page("/ops/events")(type("OpsEventsView", (OpsEvents,), {"steps": steps}))
    register_train_views(app, TrainsInput(reads, actions))

    @app.page("/metrics")
    async def metrics_view(self: View, request: Request) -> Response:
        return self.bytes(metrics.exposition(), content_type=CONTENT_TYPE_LATEST.split(";")[0])
