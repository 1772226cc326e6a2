"""Repeat-offender rule: count error classes per GPU / host / port in sliding event-time windows.

``observe(signal, states, policy)`` is pure: it takes the host's rule window states (plain
JSON-able dicts; at least those of every rule the signal's class feeds) and returns the changed
states plus at most one finding. The events a finding uses are consumed by every window given
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

from streams.classify import Signal
from streams.findings import Finding
from streams.ids import finding_id
from streams.policy import ACTION_STRENGTH, SCOPE_SPECIFICITY, Policy, RepeatRule

# Ids of events already consumed by a finding, kept so a duplicate cannot count them again.
DONE_MEMORY = 256
# Findings a host raised, kept (with the source offset that raised them) to re-send on a replay.
EMITTED_MEMORY = 16

WindowState = dict[str, Any]  # {"ev": [[ts, event_id, weight], ...], "done": [event_id, ...]}
# {"wm": ts | None, "pos": [partition, offset] | None, "rules": {state_key: WindowState},
#  "emitted": [[partition, offset, finding record], ...]}
HostState = dict[str, Any]


def state_key(rule: RepeatRule, scope_key: str) -> str:
    return f"{rule.name}|{scope_key}"


def state_keys(signal: Signal, policy: Policy) -> dict[str, tuple[RepeatRule, str]]:
    """Table keys this signal touches -> (rule, scope_key)."""
    keys: dict[str, tuple[RepeatRule, str]] = {}
    for rule in policy.rules_for(signal.error_class):
        scope_key = signal.scope_key(rule.scope)
        if scope_key is not None:
            keys[state_key(rule, scope_key)] = (rule, scope_key)
    return keys


def is_late(ts: int, watermark: int | None, grace_ms: int) -> bool:
    """Too late to count: older than the host's newest event time minus the grace."""
    return watermark is not None and ts < watermark - grace_ms


def _add(state: WindowState | None, signal: Signal, window_ms: int) -> WindowState:
    ev = [list(e) for e in (state or {}).get("ev", [])]
    done = list((state or {}).get("done", []))
    if signal.event_id not in done and all(e[1] != signal.event_id for e in ev):
        ev.append([signal.ts, signal.event_id, signal.weight])
        ev.sort(key=lambda e: (e[0], e[1]))
    newest = ev[-1][0] if ev else signal.ts
    ev = [e for e in ev if e[0] > newest - window_ms]
    return {"ev": ev, "done": done}


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
    fired: list[tuple[int, int, int, RepeatRule, str, list[list[Any]]]] = []
    for order, (key, (rule, scope_key)) in enumerate(touched.items()):
        state = _add(states.get(key), signal, rule.window)
        new_states[key] = state
        if any(e[1] == signal.event_id for e in state["ev"]) and sum(e[2] for e in state["ev"]) >= rule.count:
            rank = (ACTION_STRENGTH[rule.action], SCOPE_SPECIFICITY[rule.scope], order)
            fired.append((*rank, rule, scope_key, state["ev"]))
    if not fired:
        return new_states, None
    *_, rule, scope_key, events = min(fired, key=lambda f: (f[0], f[1], f[2]))
    used = [e[1] for e in events]
    used_set = set(used)
    for state in new_states.values():
        state["ev"] = [e for e in state["ev"] if e[1] not in used_set]
        state["done"] = (state["done"] + used)[-DONE_MEMORY:]
    # The events are consumed by every rule: also windows of other classes that counted them.
    for key, other in states.items():
        if key not in new_states and other is not None and any(e[1] in used_set for e in other["ev"]):
            new_states[key] = {
                "ev": [list(e) for e in other["ev"] if e[1] not in used_set],
                "done": (list(other.get("done", [])) + used)[-DONE_MEMORY:],
            }
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
    current = state or {"wm": None, "pos": None, "rules": {}, "emitted": []}
    seen = current["pos"]
    partition, offset = position
    if seen is not None and seen[0] == partition and offset <= seen[1]:
        raised = next((e[2] for e in current["emitted"] if (e[0], e[1]) == (partition, offset)), None)
        return HostStep(None, Finding.from_record(raised) if raised is not None else None)
    new: HostState = {**current, "pos": [partition, offset]}
    wm = current["wm"]
    if is_late(signal.ts, wm, policy.error_grace):
        return HostStep(new, late=True)
    new["wm"] = signal.ts if wm is None else max(wm, signal.ts)
    rules = dict(current["rules"])
    new_states, finding = observe(signal, rules, policy)
    rules.update(new_states)
    new["rules"] = rules
    if finding is not None:
        new["emitted"] = [*current["emitted"], [partition, offset, finding.to_record()]][-EMITTED_MEMORY:]
    return HostStep(new, finding)
