"""Error events -> error classes (the policy's ``[[classes]]``), with the scope keys they count on.

Exactly one signal per fault is classified (see policy.toml), so a fault that emits two
events is never counted twice; noise and companion events classify to nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from streams.core.policy import ErrorClass, Policy, Scope


class Signal(NamedTuple):
    """One counted occurrence of an error class on a host (and GPU or port)."""

    error_class: str
    host_id: str
    cluster: str
    ts: int
    event_id: str
    weight: int
    gpu: int | None
    port: int | None

    def scope_key(self, scope: Scope) -> str | None:
        """host_id, host_id/gpu or host_id/port; None when the event has no such scope."""
        if scope == "host":
            return self.host_id
        if scope == "gpu":
            return None if self.gpu is None else f"{self.host_id}/{self.gpu}"
        return None if self.port is None else f"{self.host_id}/{self.port}"


def _matches(cls: ErrorClass, event_type: str, p: Mapping[str, Any], noise_xids: frozenset[int]) -> bool:
    if cls.event_type != event_type:
        return False
    if event_type == "XidRaised":
        return p["xid"] not in noise_xids and p["xid"] in (cls.xids or ())
    if cls.memory is not None and p.get("memory") != cls.memory:
        return False
    if cls.correctable is not None and p.get("correctable") != cls.correctable:
        return False
    if cls.row_remap is not None and p.get("row_remap") not in cls.row_remap:
        return False
    if cls.causes is not None and p.get("cause") not in cls.causes:
        return False
    if cls.severity is not None and p.get("severity") not in cls.severity:
        return False
    return cls.link_kinds is None or p.get("kind") in cls.link_kinds


class _Classes(NamedTuple):
    """A policy's classes by event type, in the policy's order, for the lists they were built from."""

    classes: list[ErrorClass]
    noise_xids: list[int]
    by_type: dict[str, tuple[ErrorClass, ...]]
    noise: frozenset[int]


_INDEX: dict[int, _Classes] = {}  # id(policy.classes) -> its index (a few policies per process)


def _classes(policy: Policy) -> _Classes:
    """``policy``'s classes by event type: built once per list of classes (every record reads both lists, so a
    policy wrapper that notes what is read sees them read)."""
    classes, noise_xids = policy.classes, policy.noise_xids
    known = _INDEX.get(id(classes))
    if known is not None and known.classes is classes and known.noise_xids is noise_xids:
        return known
    by_type: dict[str, list[ErrorClass]] = {}
    for cls in classes:
        by_type.setdefault(cls.event_type, []).append(cls)
    if len(_INDEX) >= 16:
        _INDEX.clear()
    index = _Classes(classes, noise_xids, {t: tuple(c) for t, c in by_type.items()}, frozenset(noise_xids))
    _INDEX[id(classes)] = index
    return index


def classify(record: Mapping[str, Any], policy: Policy) -> Signal | None:
    """The signal a decoded error record counts as, or None (noise, companion, or not an error)."""
    event_type = record["event_type"]
    p = record["payload"]
    index = _classes(policy)
    noise = index.noise
    for cls in index.by_type.get(event_type, ()):
        if _matches(cls, event_type, p, noise):
            weight = max(1, int(p.get("count", 1) or 1)) if cls.weight == "count" else 1
            return Signal(
                error_class=cls.name,
                host_id=record["host_id"],
                cluster=record["cluster"],
                ts=record["ts"],
                event_id=record["event_id"],
                weight=weight,
                gpu=p.get("gpu"),
                port=p.get("port"),
            )
    return None
