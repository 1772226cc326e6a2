"""What a fault cost: pure comparisons of a faulty run's records with a clean reference.

Every function takes decoded records (plain dicts as ``Codec.decode`` returns them) or
bytes, and returns small value objects; Kafka and HTTP stay in the scenario shells.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fleetpulse.faults.lifecycle_check import check_log


@dataclass(frozen=True)
class IdComparison:
    """Records identified by an id field: which reference ids are missing, which are new, which repeat."""

    reference: int  # distinct ids in the reference
    records: int  # records in the observed topic
    distinct: int  # distinct ids in the observed topic
    lost: list[str] = field(default_factory=list)  # in the reference, not observed
    extra: list[str] = field(default_factory=list)  # observed, not in the reference
    duplicate_records: int = 0  # observed records whose id appeared before (at-least-once replays)


def compare_ids(reference: Iterable[str], observed: Sequence[str]) -> IdComparison:
    ref = set(reference)
    seen = set(observed)
    return IdComparison(
        reference=len(ref),
        records=len(observed),
        distinct=len(seen),
        lost=sorted(ref - seen),
        extra=sorted(seen - ref),
        duplicate_records=len(observed) - len(seen),
    )


def payload_ids(records: Iterable[Mapping[str, Any]], key: str) -> list[str]:
    return [str(r["payload"][key]) for r in records]


def compare_findings(
    reference: Iterable[Mapping[str, Any]], observed: Iterable[Mapping[str, Any]]
) -> IdComparison:
    return compare_ids(payload_ids(reference, "finding_id"), payload_ids(observed, "finding_id"))


def compare_actions(
    reference: Iterable[Mapping[str, Any]], observed: Iterable[Mapping[str, Any]]
) -> IdComparison:
    return compare_ids(payload_ids(reference, "action_id"), payload_ids(observed, "action_id"))


def rma_causes(actions: Iterable[Mapping[str, Any]]) -> Counter[tuple[str, str]]:
    """Distinct ``rma_opened`` action ids per (host, cause); the cause is the rule that fired."""
    ids: dict[tuple[str, str], set[str]] = {}
    for r in actions:
        p = r["payload"]
        if p["kind"] == "rma_opened":
            cause = p.get("rule") or p.get("reason") or "?"
            ids.setdefault((r["host_id"], cause), set()).add(p["action_id"])
    return Counter({k: len(v) for k, v in ids.items()})


def duplicate_rmas(reference: Iterable[Mapping[str, Any]], observed: Iterable[Mapping[str, Any]]) -> int:
    """RMAs opened more often than they should be.

    Per (host, cause): distinct RMAs beyond the reference's count for that cause (at least one
    is legitimate); and overall: distinct RMAs beyond the reference's total. The larger of both.
    """
    ref, obs = rma_causes(reference), rma_causes(observed)
    per_cause = sum(max(0, n - max(ref.get(k, 0), 1)) for k, n in obs.items())
    excess = max(0, sum(obs.values()) - sum(ref.values()))
    return max(per_cause, excess)


def rmas_from_new_findings(
    observed: Iterable[Mapping[str, Any]], reference_finding_ids: set[str]
) -> list[str]:
    """RMAs opened for a finding the reference never raised: a replay that re-found a failure under a new id."""
    return sorted(
        r["payload"]["action_id"]
        for r in observed
        if r["payload"]["kind"] == "rma_opened"
        and r["payload"].get("finding_id") not in reference_finding_ids
    )


@dataclass(frozen=True)
class EventCount:
    """Input events: what the simulator says it produced vs what the topics hold."""

    expected: int  # manifest count (per event type, summed)
    records: int  # records in the topics with a known event id
    unique: int  # distinct event ids
    lost: int  # expected - unique, never below 0 (per event type)
    duplicated: int  # records - unique
    per_type: dict[str, dict[str, int]] = field(default_factory=dict)


def count_events(expected: Mapping[str, int], records: Iterable[Mapping[str, Any]]) -> EventCount:
    """Compare the manifest's per-event-type counts with the event ids found in the topics."""
    seen: dict[str, set[str]] = {}
    n: Counter[str] = Counter()
    for r in records:
        t = r["event_type"]
        n[t] += 1
        seen.setdefault(t, set()).add(r["event_id"])
    per_type = {}
    for t in sorted(set(expected) | set(n)):
        unique = len(seen.get(t, set()))
        per_type[t] = {"expected": int(expected.get(t, 0)), "records": n[t], "unique": unique}
    return EventCount(
        expected=sum(int(v) for v in expected.values()),
        records=sum(n.values()),
        unique=sum(len(s) for s in seen.values()),
        lost=sum(max(0, v["expected"] - v["unique"]) for v in per_type.values()),
        duplicated=sum(v["records"] - v["unique"] for v in per_type.values()),
        per_type=per_type,
    )


@dataclass(frozen=True)
class AlertCount:
    produced: int  # distinct alert ids in the alerts topic
    received: int  # distinct idempotency keys the receiver stored
    lost: int  # produced, never stored
    wire_duplicates: int  # POSTs of a key already stored (dropped by the receiver: harmless)
    accepted_twice: int  # keys stored more than once (must be 0)


def count_alerts(produced_ids: Iterable[str], stored_keys: Sequence[str], wire_duplicates: int) -> AlertCount:
    produced = set(produced_ids)
    stored = Counter(stored_keys)
    return AlertCount(
        produced=len(produced),
        received=len(stored),
        lost=len(produced - set(stored)),
        wire_duplicates=wire_duplicates,
        accepted_twice=sum(c - 1 for c in stored.values() if c > 1),
    )


@dataclass(frozen=True)
class DlqShare:
    poison: int  # distinct poison records sent (duplicates excluded)
    dead_lettered: int  # ... found in the DLQ (matched by original bytes) with a non-empty reason
    without_reason: int  # ... found in the DLQ with an empty reason
    other: int  # DLQ records that are not poison (good records dead-lettered by mistake, or repeats)
    by_kind: dict[str, dict[str, int]] = field(default_factory=dict)  # kind -> {sent, dead_lettered}
    reasons: dict[str, int] = field(default_factory=dict)  # reason label -> count (poison only)
    missing_examples: list[str] = field(default_factory=list)  # kinds + hex prefix of poison not in the DLQ

    @property
    def share(self) -> float | None:
        return self.dead_lettered / self.poison if self.poison else None


def reason_label(error_type: str, reason: str) -> str:
    """Low-cardinality label: the decode error's type, or the validation reason's first word."""
    if error_type == "InvalidRecordError":
        return reason.split(":", 1)[0].strip() or "?"
    return error_type or "?"


def dlq_share(poison: Mapping[bytes, str], dead_letters: Iterable[Mapping[str, Any]]) -> DlqShare:
    """``poison``: original bytes -> kind. A poison record counts once however often it was dead-lettered."""
    found: dict[bytes, str] = {}
    labels: dict[bytes, str] = {}
    other = 0
    for r in dead_letters:
        p = r["payload"]
        value = bytes(p.get("original_value") or b"")
        if value in poison:
            reason = str(p.get("reason") or "")
            if value not in found or (reason and not found[value]):
                found[value] = reason
                labels[value] = reason_label(str(p.get("error_type") or ""), reason)
        else:
            other += 1
    by_kind: dict[str, dict[str, int]] = {}
    reasons: Counter[str] = Counter()
    for value, kind in poison.items():
        row = by_kind.setdefault(kind, {"sent": 0, "dead_lettered": 0})
        row["sent"] += 1
        if found.get(value):
            row["dead_lettered"] += 1
            reasons[labels[value]] += 1
    missing = [f"{kind}:{value[:12].hex()}" for value, kind in poison.items() if not found.get(value)][:10]
    return DlqShare(
        poison=len(poison),
        dead_lettered=sum(1 for v in poison if found.get(v)),
        without_reason=sum(1 for v in poison if v in found and not found[v]),
        other=other,
        by_kind=by_kind,
        reasons=dict(reasons.most_common()),
        missing_examples=missing,
    )


@dataclass(frozen=True)
class ActionVerdict:
    """Actions of a faulty run against a clean reference, plus the completeness of its own log."""

    lost: int  # reference action ids missing in the faulty run
    extra: int  # faulty-run action ids the reference does not have
    replays: int  # same action_id more than once in the topic
    duplicate_rmas: int
    broken: int  # steps dropped from the faulty run's own log (lifecycle_check): nothing but the fault explains them
    lost_ids: list[str] = field(default_factory=list)
    extra_ids: list[str] = field(default_factory=list)
    lost_kinds: dict[str, int] = field(default_factory=dict)
    extra_kinds: dict[str, int] = field(default_factory=dict)
    log_check: dict[str, list[str]] = field(default_factory=dict)


def judge_actions(
    reference: Sequence[Mapping[str, Any]],
    observed: Sequence[Mapping[str, Any]],
    observed_findings: Iterable[Mapping[str, Any]],
) -> ActionVerdict:
    cmp = compare_actions(reference, observed)
    kind_of = {r["payload"]["action_id"]: r["payload"]["kind"] for r in [*reference, *observed]}
    log = check_log(observed, observed_findings)
    return ActionVerdict(
        lost=len(cmp.lost),
        extra=len(cmp.extra),
        replays=cmp.duplicate_records,
        duplicate_rmas=duplicate_rmas(reference, observed),
        broken=log.broken,
        lost_ids=cmp.lost[:20],
        extra_ids=cmp.extra[:20],
        lost_kinds=dict(Counter(kind_of[a] for a in cmp.lost)),
        extra_kinds=dict(Counter(kind_of[a] for a in cmp.extra)),
        log_check={
            "dangling_causes": log.dangling_causes[:10],
            "missing_successors": log.missing_successors[:10],
            "unhandled_findings": log.unhandled_findings[:10],
        },
    )
