"""Whether a finding can reach the planner, and which maintenance domain's planner it goes to.

One check for every runner: the live worker dead-letters a refused finding under the message that
raised it, the detection core counts it; both route the others by the host's domain.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Route:
    """A finding's way to the planner: its domain, or why it cannot be planned (exactly one is set)."""

    domain: str | None
    refused: str | None = None


def route(record: dict[str, Any], domain_of: Callable[[str], str]) -> Route:
    """The domain whose planner takes the finding ``record``, or why none can (``unplannable``)."""
    why = unplannable(record)
    if why is not None:
        return Route(None, why)
    return Route(domain_of(record["host_id"]))
