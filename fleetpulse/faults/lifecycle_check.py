"""Is an action log complete? Checks that need no reference run, so planner timing cannot confuse them.

The planner emits some steps only together with their successor in one decision
(``drain_requested`` → ``drained`` → the request; ``repaired`` → ``verified`` → ``returned`` or the
hand-over; ``released`` → ``drain_requested``), and links every step to the one before by
``caused_by``. A crash that drops part of a decision leaves a step without its successor or a
``caused_by`` pointing nowhere; a dropped planner message leaves a finding with no action at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

NEEDS_SUCCESSOR = frozenset({"drain_requested", "drained", "repaired", "verified", "released"})


@dataclass(frozen=True)
class LogCheck:
    dangling_causes: list[str] = field(default_factory=list)  # action ids whose caused_by is not in the log
    missing_successors: list[str] = field(default_factory=list)  # steps never followed by the next one
    unhandled_findings: list[str] = field(
        default_factory=list
    )  # findings with no action and nothing absorbing them

    @property
    def broken(self) -> int:
        return len(self.dangling_causes) + len(self.missing_successors) + len(self.unhandled_findings)


def check_log(actions: Iterable[Mapping[str, Any]], findings: Iterable[Mapping[str, Any]]) -> LogCheck:
    by_id = {r["payload"]["action_id"]: r for r in actions}
    caused = {r["payload"]["caused_by"] for r in by_id.values() if r["payload"].get("caused_by")}
    dangling = sorted(
        a
        for a, r in by_id.items()
        if r["payload"].get("caused_by") and r["payload"]["caused_by"] not in by_id
    )
    missing = sorted(
        a for a, r in by_id.items() if r["payload"]["kind"] in NEEDS_SUCCESSOR and a not in caused
    )
    acted = {r["payload"].get("finding_id") for r in by_id.values()}
    opened: dict[tuple[str, str], list[int]] = {}
    for r in by_id.values():
        p = r["payload"]
        if p["kind"] == "suspected":
            opened.setdefault((r["host_id"], p["operation"]), []).append(int(r["ts"]))
    unhandled = []
    for f in {r["payload"]["finding_id"]: r for r in findings}.values():
        fid = f["payload"]["finding_id"]
        if fid in acted:
            continue
        earlier = opened.get((f["host_id"], f["payload"]["recommended_action"]), [])
        if not any(ts <= int(f["ts"]) for ts in earlier):  # no open operation of that kind could absorb it
            unhandled.append(fid)
    return LogCheck(dangling, missing, sorted(unhandled))
