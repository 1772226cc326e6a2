"""A detector's conclusion as a value object, and its FindingRaised record.

Both detectors return ``Finding``s; only the agent shell turns them into Kafka records.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from schemas import FindingRaised


@dataclass(frozen=True, slots=True)
class Finding:
    finding_id: str
    detector: str  # repeat_offender | slow_host | critical_fault
    rule: str
    scope: str  # gpu | host | port
    scope_key: str
    host_id: str
    cluster: str
    ts: int  # event time at which the finding became true
    error_class: str
    count: int
    window_start: int
    window_end: int
    recommended_action: str
    severity: str = "critical"
    score: float | None = None
    evidence: Mapping[str, str] = field(default_factory=dict)

    def to_record(self) -> dict[str, Any]:
        return FindingRaised(
            event_id=self.finding_id,
            host_id=self.host_id,
            cluster=self.cluster,
            ts=self.ts,
            payload={
                "finding_id": self.finding_id,
                "detector": self.detector,
                "rule": self.rule,
                "scope": self.scope,
                "scope_key": self.scope_key,
                "error_class": self.error_class,
                "count": self.count,
                "window_start": self.window_start,
                "window_end": self.window_end,
                "recommended_action": self.recommended_action,
                "severity": self.severity,
                "score": self.score,
                "evidence": dict(self.evidence),
            },
        ).to_record()

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Finding:
        p = record["payload"]
        return cls(
            finding_id=p["finding_id"],
            detector=p["detector"],
            rule=p["rule"],
            scope=p["scope"],
            scope_key=p["scope_key"],
            host_id=record["host_id"],
            cluster=record["cluster"],
            ts=record["ts"],
            error_class=p["error_class"],
            count=p["count"],
            window_start=p["window_start"],
            window_end=p["window_end"],
            recommended_action=p["recommended_action"],
            severity=p.get("severity", "critical"),
            score=p.get("score"),
            evidence=dict(p.get("evidence") or {}),
        )
