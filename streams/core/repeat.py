"""Repeat-offender rule: count error classes per GPU / host / port in sliding event-time windows.

``observe(signal, states, policy)`` is pure: it takes the host's rule window states (typed
``WindowState`` structs; at least those of every rule the signal's class feeds) and returns the
changed states plus at most one finding. The events a finding uses are consumed by every window given
that counted them, so no other rule fires on the same evidence later. Replayed events (same
event_id) are not recounted.

``fold_host`` is what the worker stores: everything one host contributes (its event-time
watermark, every rule window of its GPUs, ports and itself, the source offset it is valid
up to, and the findings it raised) under one table key, written once per record. One write
is atomic, so after a crash the state is exactly what some prefix of the host's records
made it (a host's errors share one partition); a record at or below that offset is a
replay and changes nothing, and if it had raised a finding the same finding (same id) is
sent again, in case the crash came between the state write and the send.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from streams.core.classify import Signal
from streams.core.findings import Finding
from streams.core.ids import finding_id
from streams.core.policy import ACTION_STRENGTH, SCOPE_SPECIFICITY, Policy, RepeatRule

# Ids of events already consumed by a finding, kept so a duplicate cannot count them again.
DONE_MEMORY = 256
# Findings a host raised, kept (with the source offset that raised them) to re-send on a replay.
EMITTED_MEMORY = 16

STATE_VERSION = 1

Counted = tuple[int, str, int]  # (event time, event id, weight) of one counted event


class WindowState(msgspec.Struct, frozen=True):
    """One rule window of one scope: the events it counts, and the ids already used by a finding.

    ``cls`` (event id -> error class) is kept only by multi-symptom rules (``distinct_classes`` > 1).
    """

    ev: tuple[Counted, ...] = ()
    done: tuple[str, ...] = ()
    cls: dict[str, str] = {}

    def classes(self) -> int:
        """How many different error classes the window holds (multi-symptom rules)."""
        return len({self.cls.get(e[1]) for e in self.ev})


class HostState(msgspec.Struct, frozen=True):
    """Everything one host contributes, stored under its table key (one write per record).

    ``pos`` is the (partition, offset) the state is valid up to; ``emitted`` keeps the findings
    raised with the offset that raised them, to re-send on a replay. Stored as plain JSON
    (``stored``/``from_stored``), the shape older workers wrote, plus its version ``v``.
    """

    v: int = STATE_VERSION
    wm: int | None = None
    pos: tuple[int, int] | None = None
    rules: dict[str, WindowState] = {}
    emitted: tuple[tuple[int, int, dict[str, Any]], ...] = ()

    @classmethod
    def from_stored(cls, raw: Mapping[str, Any] | None) -> HostState | None:
        """The state a table holds (None: the host has none yet); a record without ``v`` is version 1."""
        return None if raw is None else msgspec.convert(raw, cls)

    def stored(self) -> dict[str, Any]:
        """The JSON-able form the worker's table stores."""
        out: dict[str, Any] = msgspec.to_builtins(self)
        return out


def state_key(rule: RepeatRule, scope_key: str) -> str:
    return f"{rule.name}|{scope_key}"


def state_keys(signal: Signal, policy: Policy) -> dict[str, tuple[RepeatRule, str]]:
    """Table keys this signal touches -> (rule, scope_key)."""
    keys: dict[str, tuple[RepeatRule, str]] = {}
    for rule in policy.rules_for(signal.error_class):
        scope_key = signal.scope_key(rule.scope)
        if scope_key is not None and rule.counts(signal.gpu, signal.port):
            keys[state_key(rule, scope_key)] = (rule, scope_key)
    return keys


def is_late(ts: int, watermark: int | None, grace_ms: int) -> bool:
    """Too late to count: older than the host's newest event time minus the grace."""
    return watermark is not None and ts < watermark - grace_ms


def _add(state: WindowState | None, signal: Signal, rule: RepeatRule) -> WindowState:
    state = state or WindowState()
    ev = list(state.ev)
    cls = state.cls
    if signal.event_id not in state.done and all(e[1] != signal.event_id for e in ev):
        ev.append((signal.ts, signal.event_id, signal.weight))
        ev.sort(key=lambda e: (e[0], e[1]))
        if rule.distinct_classes > 1:
            cls = {**cls, signal.event_id: signal.error_class}
    newest = ev[-1][0] if ev else signal.ts
    kept = tuple(e for e in ev if e[0] > newest - rule.window)
    return WindowState(ev=kept, done=state.done, cls=_kept_classes(cls, kept))


def _kept_classes(cls: dict[str, str], ev: tuple[Counted, ...]) -> dict[str, str]:
    return {e[1]: cls[e[1]] for e in ev if e[1] in cls} if cls else cls


def _consume(state: WindowState, used: list[str]) -> WindowState:
    """The window without the events a finding used, which it remembers so a duplicate cannot count them."""
    used_set = set(used)
    ev = tuple(e for e in state.ev if e[1] not in used_set)
    return WindowState(ev=ev, done=(*state.done, *used)[-DONE_MEMORY:], cls=_kept_classes(state.cls, ev))


def observe(
    signal: Signal, states: Mapping[str, WindowState | None], policy: Policy
) -> tuple[dict[str, WindowState], Finding | None]:
    """Count the signal in every rule window it feeds; fire one rule that reaches its count.

    Of rules reaching their count on the same event, the one with the strongest remedy fires
    (five fatal XIDs in a day call for an RMA, even if three of them also make a GPU's reboot
    rule fire), then the most specific scope; its events are consumed by every rule.
    """
    touched = state_keys(signal, policy)
    new_states: dict[str, WindowState] = {}
    fired: list[tuple[int, int, int, RepeatRule, str, tuple[Counted, ...]]] = []
    for order, (key, (rule, scope_key)) in enumerate(touched.items()):
        state = _add(states.get(key), signal, rule)
        new_states[key] = state
        if (
            any(e[1] == signal.event_id for e in state.ev)
            and sum(e[2] for e in state.ev) >= rule.count
            and (rule.distinct_classes == 1 or state.classes() >= rule.distinct_classes)
        ):
            rank = (ACTION_STRENGTH[rule.action], SCOPE_SPECIFICITY[rule.scope], order)
            fired.append((*rank, rule, scope_key, state.ev))
    if not fired:
        return new_states, None
    *_, rule, scope_key, events = min(fired, key=lambda f: (f[0], f[1], f[2]))
    used = [e[1] for e in events]
    used_set = set(used)
    for key, state in new_states.items():
        new_states[key] = _consume(state, used)
    # The events are consumed by every rule: also windows of other classes that counted them.
    for key, other in states.items():
        if key not in new_states and other is not None and any(e[1] in used_set for e in other.ev):
            new_states[key] = _consume(other, used)
    finding = Finding(
        finding_id=finding_id(rule.detector, rule.name, scope_key, *sorted(used)),
        detector=rule.detector,
        rule=rule.name,
        scope=rule.scope,
        scope_key=scope_key,
        host_id=signal.host_id,
        cluster=signal.cluster,
        ts=max(e[0] for e in events),
        error_class=signal.error_class,
        count=sum(e[2] for e in events),
        window_start=min(e[0] for e in events),
        window_end=max(e[0] for e in events),
        recommended_action=rule.action,
        severity=rule.severity,
        evidence={
            "event_ids": ",".join(used[:20]),
            "classes": ",".join(rule.classes),
            "window_ms": str(rule.window),
            "threshold": str(rule.count),
        },
    )
    return new_states, finding


@dataclass(frozen=True, slots=True)
class HostStep:
    """What one source record did to its host: the state to store (None: unchanged) and what to send."""

    state: HostState | None
    finding: Finding | None = None  # raised by this record, or raised by it before a replay
    late: bool = False


def fold_host(state: HostState | None, signal: Signal, position: tuple[int, int], policy: Policy) -> HostStep:
    """Fold one signal, read at (partition, offset), into its host's state."""
    current = state or HostState()
    seen = current.pos
    partition, offset = position
    if seen is not None and seen[0] == partition and offset <= seen[1]:
        raised = next((e[2] for e in current.emitted if (e[0], e[1]) == (partition, offset)), None)
        return HostStep(None, Finding.from_record(raised) if raised is not None else None)
    moved = msgspec.structs.replace(current, pos=(partition, offset))
    wm = current.wm
    if is_late(signal.ts, wm, policy.error_grace):
        return HostStep(moved, late=True)
    new_states, finding = observe(signal, current.rules, policy)
    emitted = current.emitted
    if finding is not None:
        emitted = (*emitted, (partition, offset, finding.to_record()))[-EMITTED_MEMORY:]
    new = msgspec.structs.replace(
        moved,
        wm=signal.ts if wm is None else max(wm, signal.ts),
        rules={**current.rules, **new_states},
        emitted=emitted,
        v=STATE_VERSION,
    )
    return HostStep(new, finding)
