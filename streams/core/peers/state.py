"""Typed, versioned state the slow-host detector stores, as JSON-able builtins.

Host windows (``HostWindows``, one per host) live in the samples stage's per-partition
checkpoints (``streams.core.samples.checkpoint``); the cluster stage keeps ``ClusterMeta`` under
``C|meta`` and ``ClusterHistory`` under ``C|hist`` in its Faust table, which stores JSON-able
builtins (``stored``/``from_stored``, as ``streams.core.repeat.HostState``), exactly as they come back from
its JSON serializer; an in-process store (``streams.core.state.MemoryStore``) may hold them typed. Fields added since a shape was first written have defaults, and a record
without ``v`` is version 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from streams.core.state import as_json

STATE_VERSION = 1


class Window(msgspec.Struct, frozen=True, array_like=True):
    """An open host window's sums, stored as ``[step_ms, bus_bw, n, end, job]`` (no job before jobs were kept)."""

    step_ms: float  # sum over the window's samples
    bus_bw: float  # sum over the window's samples
    n: int
    end: int
    job: str | None = None  # the window's last job


class HostWindows(msgspec.Struct, frozen=True, omit_defaults=True):
    """One host's open windows by start (a JSON key, so a string), newest event time, and closed-up-to.

    ``deg`` counts, per open window, the samples whose job-independent telemetry shows degradation
    (``ground.degraded.sample_degraded``); kept apart from ``Window``'s fixed array and left out when
    empty, so a host without any is stored as older workers stored it, and they ignore the key.
    """

    wm: int | None = None
    closed: int | None = None
    w: dict[str, Window] = {}
    deg: dict[str, int] = {}


class ClusterMeta(msgspec.Struct, frozen=True):
    """A cluster's progress: per source partition (a string) its newest event time, which are idle, open windows."""

    pwm: dict[str, int] = {}
    idle: tuple[str, ...] = ()
    nsrc: int = 1
    closed: int | None = None
    open: dict[str, int] = {}  # window start -> end
    v: int = STATE_VERSION

    @classmethod
    def from_stored(cls, raw: ClusterMeta | Mapping[str, Any] | None) -> ClusterMeta:
        """What ``C|meta`` holds (an empty meta when nothing yet), typed or as JSON builtins."""
        if isinstance(raw, ClusterMeta):
            return raw
        return cls() if raw is None else msgspec.convert(raw, cls)

    def stored(self) -> dict[str, Any]:
        return as_json(self)

    def thaw(self) -> Marks:
        return Marks(dict(self.pwm), list(self.idle), self.nsrc, self.closed, dict(self.open))


@dataclass(slots=True)
class Marks:
    """``ClusterMeta``'s working copy while one bundle is folded (many updates, one store)."""

    pwm: dict[str, int]
    idle: list[str]
    nsrc: int
    closed: int | None
    open: dict[str, int]

    def freeze(self) -> ClusterMeta:
        return ClusterMeta(dict(self.pwm), tuple(self.idle), self.nsrc, self.closed, dict(self.open))


# (window start, slow 0/1, z_step, z_bus_bw) of a host's last windows, oldest first
Verdicts = tuple[tuple[int, int, float, float], ...]


class HostHistory(msgspec.Struct, frozen=True, omit_defaults=True):
    """A host's verdicts of its last n windows, whether the current episode was reported, and its evidence:
    the CUSUM ``s`` (nats), the window its evidence began to grow (``start``), the slow and all windows
    since (``slow``, ``seen``), and its last slow window (``last_slow``). Left out at their defaults, so a
    host never slow is stored as older workers stored it; a history they wrote reads with no evidence."""

    hist: Verdicts = ()
    flagged: bool = False
    s: float = 0.0
    start: int | None = None
    slow: int = 0
    seen: int = 0
    last_slow: int | None = None


# (bundle id, window start, finding records) of the last bundles that raised findings
Emitted = tuple[tuple[str, int, tuple[dict[str, Any], ...]], ...]


class ClusterHistory(msgspec.Struct, frozen=True):
    """``C|hist``: every host's history, the newest window evaluated, the findings of the last bundles raising any."""

    hosts: dict[str, HostHistory] = {}
    evaluated: int | None = None
    emitted: Emitted = ()
    v: int = STATE_VERSION

    @classmethod
    def from_stored(cls, raw: ClusterHistory | Mapping[str, Any] | None) -> ClusterHistory:
        """What ``C|hist`` holds, typed or as JSON builtins."""
        if isinstance(raw, ClusterHistory):
            return raw
        return cls() if raw is None else msgspec.convert(raw, cls)

    def stored(self) -> dict[str, Any]:
        return as_json(self)


class _EmittedOnly(msgspec.Struct, frozen=True):
    emitted: Emitted = ()


def emitted_of(raw: ClusterHistory | Mapping[str, Any] | None) -> Emitted:
    """``C|hist``'s recent findings alone, without converting every host's history (read once per bundle)."""
    if isinstance(raw, ClusterHistory):
        return raw.emitted
    if not raw or "emitted" not in raw:
        return ()
    return msgspec.convert({"emitted": raw["emitted"]}, _EmittedOnly).emitted
