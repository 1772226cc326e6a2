"""Whether a finding can reach the planner (checked before it does, by every runner)."""

from __future__ import annotations

from typing import Any

from streams.core.actions import REQUEST_KIND
from streams.core.findings import Finding
from streams.trains.campaign import CHANGE


def unplannable(record: dict[str, Any]) -> str | None:
    """Why a decoded FindingRaised cannot be planned (None when it can).

    Checked before a finding reaches the planner: a finding the planner cannot act on would raise
    there after its first steps were applied in memory, and every later decision of its
    maintenance domain would then fail on the same operation.
    """
    try:
        finding = Finding.from_record(record)
    except (KeyError, TypeError) as exc:
        return f"unplannable_finding: missing {exc}"
    if finding.recommended_action not in REQUEST_KIND or finding.recommended_action == CHANGE:
        return f"unplannable_finding: unknown recommended_action {finding.recommended_action!r}"
    return None
