"""The planner's typed message: a ``MaintenanceActionRecorded`` as a value, and the kinds of action.

Every stage that writes or reads ``fleet.actions`` speaks ``Action``; ``streams.core.fleet.lifecycle`` folds them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from schemas import MaintenanceActionRecorded
from streams.core.ids import operation_id

ActionKind = Literal[
    "suspected",
    "absorbed",
    "drain_requested",
    "drained",
    "rma_opened",
    "reboot_requested",
    "nic_replacement_requested",
    "cable_replacement_requested",
    "diagnostics_requested",
    "repaired",
    "verified",
    "returned",
    "deferred",
    "released",
    "train_halted",
    "train_resumed",
    "escalated",
    "retired",
    # change campaigns (streams.trains): a host's visit, and the campaign's own steps (host '-')
    "change_requested",
    "change_applied",
    "withdrawn",
    "campaign_halted",
    "campaign_completed",
    "gate_opened",
    "errors_counted",
    "steps_counted",
]
REQUEST_KIND = {
    "rma": "rma_opened",
    "reboot": "reboot_requested",
    "nic_replacement": "nic_replacement_requested",
    "cable_replacement": "cable_replacement_requested",
    "diagnostics": "diagnostics_requested",
    "change": "change_requested",  # a campaign's planned change; the host side completes it, not a repair time
}
REQUEST_KINDS = frozenset(REQUEST_KIND.values())
DOMAIN_KINDS = frozenset({"train_halted", "train_resumed"})
# A finding for a host already in (or queued for) the same operation: recorded so that its id is
# known to every rebuilt state and a re-delivery of it never opens the work a second time.
ABSORBED = "absorbed"
# A host flagged again soon after it returned from a repair: its new work is an RMA and a person is paged.
ESCALATED = "escalated"
# A host whose repairs kept failing is taken out of service for good (``streams.core.planning.retirement``).
RETIRED = "retired"


@dataclass(frozen=True, slots=True)
class Action:
    """One MaintenanceActionRecorded, as a value."""

    action_id: str
    kind: str
    host_id: str  # FLEET ('-') for domain-level actions (train_halted / train_resumed)
    cluster: str
    domain: str
    operation: str
    ts: int
    finding_id: str | None = None
    rule: str | None = None
    reason: str = ""
    caused_by: str | None = None

    @property
    def op_id(self) -> str | None:
        if self.kind in DOMAIN_KINDS or self.kind == ABSORBED or self.finding_id is None:
            return None
        return operation_id(self.host_id, self.operation, self.finding_id)

    def to_record(self) -> dict[str, Any]:
        return MaintenanceActionRecorded(
            event_id=self.action_id,
            host_id=self.host_id,
            cluster=self.cluster,
            ts=self.ts,
            payload={
                "action_id": self.action_id,
                "kind": self.kind,
                "operation": self.operation,
                "maintenance_domain": self.domain,
                "finding_id": self.finding_id,
                "rule": self.rule,
                "reason": self.reason,
                "caused_by": self.caused_by,
            },
        ).to_record()

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Action:
        """The action a decoded ``MaintenanceActionRecorded`` carries (ValueError for any other record)."""
        if record.get("event_type") != MaintenanceActionRecorded.EVENT_TYPE:
            raise ValueError(f"not a maintenance action: {record.get('event_type')!r}")
        p = record["payload"]
        return cls(
            action_id=p["action_id"],
            kind=p["kind"],
            host_id=record["host_id"],
            cluster=record["cluster"],
            domain=p["maintenance_domain"],
            operation=p["operation"],
            ts=record["ts"],
            finding_id=p.get("finding_id"),
            rule=p.get("rule"),
            reason=p.get("reason") or "",
            caused_by=p.get("caused_by"),
        )
