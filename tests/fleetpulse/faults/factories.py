"""Small record factories for the fault suite's unit tests (decoded-record dicts, as Codec returns)."""

from __future__ import annotations

from typing import Any


def action(
    aid: str,
    kind: str,
    host: str = "h1",
    *,
    caused_by: str | None = None,
    finding: str | None = "f1",
    rule: str | None = "dram_uce_repeat_gpu",
    operation: str = "rma",
    ts: int = 0,
) -> dict[str, Any]:
    return {
        "event_type": "MaintenanceActionRecorded",
        "event_id": aid,
        "host_id": host,
        "ts": ts,
        "payload": {
            "action_id": aid,
            "kind": kind,
            "operation": operation,
            "finding_id": finding,
            "rule": rule,
            "reason": "",
            "caused_by": caused_by,
            "maintenance_domain": "d0",
        },
    }


def finding(fid: str, host: str = "h1", ts: int = 0, operation: str = "rma") -> dict[str, Any]:
    return {
        "event_type": "FindingRaised",
        "event_id": fid,
        "host_id": host,
        "ts": ts,
        "payload": {"finding_id": fid, "recommended_action": operation},
    }


def chain(prefix: str, host: str = "h1", finding_id: str = "f1", ts: int = 0) -> list[dict[str, Any]]:
    """A complete RMA lifecycle: suspected → drain_requested → drained → rma_opened → repaired → verified → returned."""
    kinds = ["suspected", "drain_requested", "drained", "rma_opened", "repaired", "verified", "returned"]
    out, prev = [], None
    for k in kinds:
        aid = f"{prefix}-{k}"
        out.append(action(aid, k, host, caused_by=prev, finding=finding_id, ts=ts))
        prev = aid
    return out
