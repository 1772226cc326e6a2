"""The collector protocol: every source is a small module that turns one poll into an ``Observation``.

Collectors never raise on bad input: they count it in ``Problems`` (logged once per kind) and go on.
State that must survive a restart (log positions, counter baselines) goes through ``state``/``restore``.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, Protocol, runtime_checkable

log = logging.getLogger(__name__)

FactType = Literal["XidRaised", "EccErrorObserved", "PcieAerReported", "LinkEventObserved"]


class Fact(NamedTuple):
    """One fault event a source saw: its type, event time (ms) and payload shaped like the simulator's.

    A NamedTuple, not a frozen dataclass: an XID storm makes one per line, and it is 3x cheaper to build.
    """

    event_type: FactType
    ts: int
    payload: dict[str, Any]
    source: str


@dataclass(slots=True)
class Observation:
    """What one poll of one collector returned: fault facts and per-unit readings for the next sample."""

    facts: list[Fact] = field(default_factory=list)
    gpus: dict[int, dict[str, Any]] = field(default_factory=dict)
    nics: dict[int, dict[str, Any]] = field(default_factory=dict)
    inventory: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str | None] = field(
        default_factory=dict
    )  # component -> version (``VERSION_COMPONENTS``)


@runtime_checkable
class Collector(Protocol):
    """A telemetry source polled every ``interval_s``."""

    name: str
    interval_s: float

    def collect(self, now_ms: int) -> Observation: ...

    def state(self) -> dict[str, Any]:
        """What must survive a restart (JSON-able)."""
        ...

    def restore(self, state: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


class Problems:
    """Bad input and unreadable sources: counted per (source, kind), logged once per (source, kind, subject)."""

    def __init__(self, logger: logging.Logger = log) -> None:
        self.counts: Counter[tuple[str, str]] = Counter()
        self._logged: set[tuple[str, str, str]] = set()
        self._log = logger

    def add(self, source: str, kind: str, subject: str = "", detail: str = "") -> None:
        self.counts[(source, kind)] += 1
        key = (source, kind, subject)
        if key not in self._logged:
            self._logged.add(key)
            self._log.warning(
                "%s: %s %s%s (logged once; counted)", source, kind, subject, f": {detail}" if detail else ""
            )

    def total(self, source: str | None = None) -> int:
        return sum(n for (s, _), n in self.counts.items() if source is None or s == source)

    def as_dict(self) -> dict[str, int]:
        return {f"{s}.{k}": n for (s, k), n in sorted(self.counts.items())}
