"""Operators' steps on a host (out of service, returned, repair, RMA) as ``OperatorEventRecorded`` records.

One builder for both ways in, ``fleetpulse ops record`` and the detector's ``POST /ops/events``
(ticket systems, node controllers), so both check the same vocabulary and derive the same id: a
step re-sent with the same host, kind, ticket and time is the same event and folds once.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from schemas import BoundsError, OperatorEventRecorded
from schemas.bounds import LONG_MAX, MAX_ID_CHARS, MIN_TS_MS, check_id, check_ts, cut_text
from schemas.taxonomy import IncidentCause, OperatorEventKind
from streams.core.ids import stable_id

MAX_STEP_BYTES = 64 * 1024  # a step is a few hundred bytes; POST /ops/events refuses larger bodies (413)
MAX_REASON_CHARS = 2048
HostId = Annotated[str, AfterValidator(check_id)]
Cluster = Annotated[str, AfterValidator(lambda v: check_id(v, what="cluster"))]


def _short(limit: int) -> AfterValidator:
    return AfterValidator(lambda v: cut_text(v, limit))


class OperatorStep(BaseModel):
    """What a person or system reports; ``ts`` (epoch ms) defaults to when it is recorded.

    Ids follow the host-id rule and texts are cut to a bound (``schemas.bounds``); the time is
    checked against the clock by ``parse_step``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    host_id: HostId
    kind: OperatorEventKind
    actor: Annotated[str, Field(min_length=1), _short(MAX_ID_CHARS)]
    reason: Annotated[str, _short(MAX_REASON_CHARS)] = ""
    ticket_id: Annotated[str, _short(MAX_ID_CHARS)] | None = None
    cause: IncidentCause | None = None
    ts: int | None = Field(None, ge=MIN_TS_MS, le=LONG_MAX)  # after 2000-01-01, like every event time
    cluster: Cluster | None = None


class StepError(ValueError):
    """Why a request or command line is not an operator step (one line, for a 400 or a CLI error)."""


def parse_step(data: Mapping[str, Any] | Any, now_ms: int) -> OperatorStep:
    """An ``OperatorStep`` within the bounds of every way in; StepError says what is wrong."""
    try:
        step = OperatorStep.model_validate(data)
        if step.ts is not None:
            check_ts(step.ts, now_ms, what="ts")
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "body"
        raise StepError(f"{where}: {err['msg']}") from None
    except BoundsError as exc:
        raise StepError(str(exc)) from None
    return step


def parse_step_body(body: bytes, now_ms: int) -> OperatorStep:
    """The step a POSTed JSON body holds (strict JSON; deep nesting, NaN and bad UTF-8 refused)."""
    try:
        data = json.loads(body or b"null", parse_constant=_no_constant)
    except RecursionError:
        raise StepError("body nests too deeply") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, StepError
        raise StepError(str(exc) if isinstance(exc, StepError) else "body is not JSON") from None
    if not isinstance(data, dict):
        raise StepError(f"body: a JSON object is required, not {type(data).__name__}")
    return parse_step(data, now_ms)


def _no_constant(name: str) -> float:
    raise StepError(f"{name} is not JSON")


def operator_record(step: OperatorStep, *, cluster: str, now_ms: int) -> dict[str, Any]:
    """The ``OperatorEventRecorded`` record of a step (its cluster from the inventory when it names none)."""
    ts = step.ts if step.ts is not None else now_ms
    return OperatorEventRecorded(
        event_id=stable_id("ops", step.host_id, step.kind, step.ticket_id or "", ts),
        host_id=step.host_id,
        cluster=step.cluster or cluster,
        ts=ts,
        payload={
            "kind": step.kind,
            "actor": step.actor,
            "reason": step.reason,
            "ticket_id": step.ticket_id,
            "cause": step.cause,
        },
    ).to_record()


def bearer_ok(header: str | None, token: str | None) -> bool:
    """True when ``Authorization: Bearer <token>`` carries the configured token (none configured: never)."""
    if not token or not header or not header.isascii():  # a non-UTF-8 byte arrives surrogate-escaped
        return False
    scheme, _, given = header.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(
        given.strip().encode(), token.encode("utf-8", "surrogateescape")
    )
