"""True incidents as the simulated fleet defines them, whatever the policy under test does.

An incident is a host's persistent fault (a lemon's bad part, a slow host's cause) from its onset until a
repair cures it. A repair that does not cure it ends nothing, but when the host comes back to service still
faulty the operators must hear that the repair failed: from that return on, the fault is a new incident
(a relapse). Another page about the same fault with no failed repair in between is not a new incident,
however long the fault lasts and however often a detector finds it again. The fleet records each such
return (``fleetpulse.twin.response.FleetResponse``, ``relapses`` in the truth manifest's ``closed_loop``);
an open-loop fleet repairs nothing, so each true host is one incident.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

Relapses = Mapping[str, Sequence[int]]  # host -> times it came back from a repair that did not cure it


def relapses_of(answer: Mapping[str, Any] | None) -> dict[str, list[int]]:
    """Per host, the sorted times it returned from a repair that did not cure it (a fleet's ``closed_loop``
    answer; none for an open loop or a truth written before the fleet recorded them)."""
    raw = (answer or {}).get("relapses") or {}
    return {str(host): sorted(int(t) for t in times) for host, times in raw.items()}


def incident_of(relapses: Relapses, host: str, ts: int) -> int:
    """Which of ``host``'s incidents an event at ``ts`` belongs to: 0 before its first relapse, n from its n-th.

    A page sent at the very moment the host returns (the return's own notifications) belongs to the new one.
    """
    return bisect.bisect_right(relapses.get(host, ()), ts)


def found_incidents(
    hosts: Iterable[str], findings: Iterable[tuple[str, int]], relapses: Relapses
) -> dict[str, set[int]]:
    """Per true host, its incidents the detectors found: its first (it is a true host), and each relapse a
    finding on the host (``(host, ts)`` in ``findings``) followed before the next one."""
    found = {h: {0} for h in hosts}
    if relapses:
        for host, ts in findings:
            if host in found:
                found[host].add(incident_of(relapses, host, ts))
    return found


def pages_per_incident(
    pages: Iterable[tuple[str, int]], found: Mapping[str, set[int]], relapses: Relapses
) -> Counter[tuple[str, int]]:
    """Pages per (host, incident) of ``found``: each page (``(host, ts its group first fired)``, on a host of
    ``found``) against the incident it fired in, or the one before it when that relapse was not found."""
    per: Counter[tuple[str, int]] = Counter()
    for host, first in pages:
        n = incident_of(relapses, host, first)
        per[host, max(i for i in found[host] if i <= n)] += 1
    return per
