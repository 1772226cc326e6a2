"""The detector's HTTP API for change campaigns: ``GET /trains``, ``POST /trains`` (start) and
``POST /trains/{campaign}/{step}`` (pause, resume, abort, rollback), with the ops bearer token.

The same records ``fleetpulse train`` writes (``streams.trains.commands``), checked against the
campaigns this worker has folded, and acknowledged by the broker before the caller is told so.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

import faust
from faust.web import Request, Response, View
from pydantic import ValidationError

from streams.actions_input import ActionsInput
from streams.core.errors import CampaignError
from streams.fleet_reads import FleetReads
from streams.http_auth import authorized_body
from streams.operator_events import MAX_STEP_BYTES
from streams.trains.commands import CampaignSpec, describe, rollback_records, start_record, step_record

log = logging.getLogger(__name__)


STEPS: dict[str, Literal["paused", "resumed", "aborted"]] = {
    "pause": "paused",
    "resume": "resumed",
    "abort": "aborted",
}


@dataclass(frozen=True)
class TrainsInput:
    """What the /trains views use: the campaigns folded so far (``reads``) and where a step is written."""

    reads: FleetReads
    actions: ActionsInput


def campaigns(reads: FleetReads) -> list[dict[str, Any]]:
    return [describe(c) for c in reads.fleet.trains.campaigns.values()]


def host_versions(reads: FleetReads, host_id: str) -> dict[str, Any]:
    """The host's newest reported version of each component, from its agent or its side's record."""
    found = dict(reads.inventory.versions_of(host_id))
    for component, got in reads.fleet.trains.reported.get(host_id, {}).items():
        if component not in found or found[component][1] <= got[1]:
            found[component] = got
    return {c: {"version": v, "reported_ts": ts} for c, (v, ts) in sorted(found.items())}


async def campaign_command(
    trains: TrainsInput,
    headers: Any,
    read_body: Callable[[], Awaitable[bytes]],
    campaign: str | None,
    step: str | None,
) -> tuple[int, dict[str, Any]]:
    """(status, JSON body): 401 without the token (checked before the body is read), 413 for a body over
    ``MAX_STEP_BYTES``, 400 for a bad request, 409 when the campaign's status forbids it."""
    body = await authorized_body(trains.actions.token, headers, read_body, MAX_STEP_BYTES)
    if isinstance(body, tuple):
        return body
    now = int(time.time() * 1000)
    try:
        data = json.loads(body or b"{}")
        if not isinstance(data, dict):
            raise ValueError("the body must be a JSON object")
        if campaign is None:
            records = [start_record(CampaignSpec.model_validate(data), now)]
        elif step == "rollback":
            records = rollback_records(
                trains.reads.fleet.trains, campaign, actor=str(data.get("actor") or "api"), now_ms=now
            )
        elif step in STEPS:
            records = [
                step_record(
                    trains.reads.fleet.trains,
                    campaign,
                    STEPS[step],
                    actor=str(data.get("actor") or "api"),
                    now_ms=now,
                    reason=str(data.get("reason") or ""),
                )
            ]
        else:
            return 400, {"error": f"unknown step {step!r}: pause, resume, abort or rollback"}
    except (ValueError, ValidationError, RecursionError) as exc:
        return 400, {"error": f"not a campaign request: {exc}"}
    except CampaignError as exc:
        return 409, {"error": str(exc)}
    for record in records:
        await trains.actions.send(b"-", trains.actions.codec.encode(record))
    return 202, {
        "event_ids": [r["event_id"] for r in records],
        "campaign_ids": [r["payload"]["campaign_id"] for r in records],
    }


async def answer_campaign_post(
    trains: TrainsInput, request: Request, campaign: str | None, step: str | None
) -> tuple[int, dict[str, Any]]:
    """The answer to ``POST /trains…``: never a 500, one log line for every refusal."""
    try:
        status, body = await campaign_command(trains, request.headers, request.read, campaign, step)  # type: ignore[arg-type]
    except Exception as exc:  # the broker, mostly: one line, no traceback; the caller may retry
        log.warning("POST /trains: cannot record the step: %s: %s", type(exc).__name__, exc)
        return 503, {"error": "cannot record the campaign step now; retry later"}
    if status >= 400:
        log.info("POST /trains: refused (%d): %s", status, body["error"])
    return status, body


def register_train_views(app: faust.App, trains: TrainsInput) -> None:

    class Trains(View):
        async def get(self, request: Request, **kwargs: Any) -> Response:
            return self.json(campaigns(trains.reads))

        async def post(self, request: Request, **kwargs: Any) -> Response:
            status, body = await answer_campaign_post(trains, request, None, None)
            return self.json(body, status=status)

    class TrainStep(View):
        async def post(self, request: Request, campaign: str, step: str, **kwargs: Any) -> Response:
            status, body = await answer_campaign_post(trains, request, campaign, step)
            return self.json(body, status=status)

    app.page("/trains")(Trains)
    app.page("/trains/{campaign}/{step}")(TrainStep)
