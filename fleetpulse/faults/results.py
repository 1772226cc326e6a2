"""One scenario's outcome as a table row, and the goals it is judged against.

``ScenarioResult`` holds the measured numbers (None: not measured by that scenario) plus
details for the report; ``misses()`` lists each goal that was not met, in words.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

GOALS = "0 events, findings, actions, alerts lost; 0 duplicate events, RMAs or alerts accepted twice; 100 % of poison in the DLQ with a reason; precision and recall as in the clean reference; every part recovers by itself"


@dataclass
class ScenarioResult:
    scenario: str
    injected: str  # what was done, in words ("5 × SIGKILL of the detect worker")
    command: str = ""
    ran_at: str = ""  # ISO date-time (UTC) of the run
    duration_s: float = 0.0
    events_lost: int | None = None
    events_duplicated: int | None = None
    findings_lost: int | None = None
    findings_extra: int | None = None  # judged only where nothing may add findings (poison duplicates)
    actions_lost: int | None = None
    actions_extra: int | None = None  # idem
    actions_broken: int | None = None  # steps missing from the faulty run's own log (no reference needed)
    action_replays: int | None = None  # same action_id twice in the topic (at-least-once; consumers dedup)
    duplicate_rmas: int | None = None
    alerts_lost: int | None = None
    alerts_wire_duplicates: int | None = None  # POSTed again, dropped by the receiver's Idempotency-Key check
    alerts_accepted_twice: int | None = None
    dlq_share: float | None = None
    parts_restarted: int | None = None  # parts that exited under the fault and had to be started again
    precision: dict[str, float | None] = field(default_factory=dict)  # detector -> value (faulty run)
    recall: dict[str, float | None] = field(default_factory=dict)
    reference_precision: dict[str, float | None] = field(default_factory=dict)
    reference_recall: dict[str, float | None] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    explanations: list[str] = field(default_factory=list)  # why a miss happened, where known

    def misses(self) -> list[str]:
        """Every goal this run did not meet (an empty list: all met)."""
        out = []
        zero = {
            "events lost": self.events_lost,
            "duplicate events": self.events_duplicated,
            "findings lost": self.findings_lost,
            "extra findings": self.findings_extra,
            "extra actions": self.actions_extra,
            "actions dropped from the log": self.actions_broken,
            "actions lost": self.actions_lost,
            "duplicate RMAs": self.duplicate_rmas,
            "alerts lost": self.alerts_lost,
            "alerts accepted twice": self.alerts_accepted_twice,
            "parts that exited and had to be restarted": self.parts_restarted,
        }
        out += [f"{name}: {value}" for name, value in zero.items() if value]
        if self.dlq_share is not None and self.dlq_share < 1.0:
            out.append(f"poison in the DLQ with a reason: {self.dlq_share:.2%}")
        for detector, ref in self.reference_precision.items():
            got = self.precision.get(detector)
            if ref is not None and (got is None or got < ref - 1e-9):
                out.append(f"{detector} precision {_f(got)} < reference {_f(ref)}")
        for detector, ref in self.reference_recall.items():
            got = self.recall.get(detector)
            if ref is not None and (got is None or got < ref - 1e-9):
                out.append(f"{detector} recall {_f(got)} < reference {_f(ref)}")
        return out

    @property
    def met(self) -> bool:
        return not self.misses()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScenarioResult:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)


def _f(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def pr(precision: dict[str, float | None], recall: dict[str, float | None]) -> str:
    """``ro 1.00/1.00 · slow 1.00/0.75``: precision/recall per detector, compact."""
    short = {"repeat_offender": "repeat", "slow_host": "slow", "critical_fault": "critical"}
    parts = []
    for detector in sorted(set(precision) | set(recall)):
        p, r = precision.get(detector), recall.get(detector)
        ps = "n/a" if p is None else f"{p:.2f}"
        rs = "n/a" if r is None else f"{r:.2f}"
        parts.append(f"{short.get(detector, detector)} {ps}/{rs}")
    return " · ".join(parts) or "—"
