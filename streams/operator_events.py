"""Operators' steps on a host (out of service, returned, repair, RMA) as ``OperatorEventRecorded`` records.

One builder for both ways in, ``fleetpulse ops record`` and the detector's ``POST /ops/events``
(ticket systems, node controllers), so both check the same vocabulary and derive the same id: a
step re-sent with the same host, kind, ticket and time is the same event and folds once.
"""

from __future__ import annotations

import hmac
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from schemas import OperatorEventRecorded
from schemas.taxonomy import IncidentCause, OperatorEventKind
from streams.ids import stable_id


class OperatorStep(BaseModel):
    """What a person or system reports; ``ts`` (epoch ms) defaults to when it is recorded."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host_id: str = Field(min_length=1)
    kind: OperatorEventKind
    actor: str = Field(min_length=1)
    reason: str = ""
    ticket_id: str | None = None
    cause: IncidentCause | None = None
    ts: int | None = Field(None, ge=946_684_800_000)  # after 2000-01-01, like every event time
    cluster: str | None = None


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
    if not token or not header:
        return False
    scheme, _, given = header.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())
