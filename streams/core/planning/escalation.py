"""Whether a finding escalates to an RMA: its host's last repair did not hold.

Two looks back from the finding: the host returned from any repair within ``escalate_within``
(a reboot that did not help; a campaign's planned change repaired nothing, and whether the new
version is worse is the campaign's safety test's to say), or its repair history holds a repair, an RMA or a part replaced by
the planner or recorded by operators, within ``escalate_after_repair_within`` (hardware replaced
months ago failing again is not a case for another reboot). Only a host back in service is weighed:
one with an open repair has not returned since the finding that opened it, which was weighed then.
"""

from __future__ import annotations

from streams.core.findings import Finding
from streams.core.fleet.lifecycle import FleetState
from streams.core.planning.absorption import open_repairs
from streams.core.policy import Policy
from streams.trains.campaign import CHANGE

# Operations that replace or fix hardware (a reboot or diagnostics fix nothing that should hold).
HOLDING_REPAIRS = frozenset({"rma", "nic_replacement", "cable_replacement"})
DAY_MS = 86_400_000


def escalation_of(policy: Policy, state: FleetState, finding: Finding) -> str | None:
    """Why ``finding`` escalates, else None (``escalate_within = 0`` turns escalation off)."""
    p = policy.planner
    host = state.hosts.get(finding.host_id)
    if p.escalate_within <= 0 or open_repairs(host):
        return None
    asks = f"{finding.rule} asks {finding.recommended_action}, escalated to rma"
    if (
        host is not None
        and host.returned_ts is not None
        and host.returned_from != CHANGE
        and finding.ts - host.returned_ts <= p.escalate_within
    ):
        return (
            f"flagged again {(finding.ts - host.returned_ts) / DAY_MS:.1f} d after returning from "
            f"{host.returned_from} (within {p.escalate_within / DAY_MS:g} d): {asks}"
        )
    repaired = [(ts, op) for ts, op in (host.repairs if host else []) if op in HOLDING_REPAIRS]
    repaired += state.outages.repairs_of(finding.host_id)
    recent = [(ts, what) for ts, what in repaired if 0 <= finding.ts - ts <= p.escalate_after_repair_within]
    if not recent:
        return None
    ts, what = max(recent)
    return (
        f"flagged again {(finding.ts - ts) / DAY_MS:.1f} d after returning from {what} (its repair "
        f"history: within {p.escalate_after_repair_within / DAY_MS:g} d of a repair): {asks}"
    )
