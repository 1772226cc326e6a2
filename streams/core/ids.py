"""Deterministic identifiers: the same inputs give the same id on every worker and every replay.

They are what makes at-least-once processing idempotent: a retried worker re-emits a
finding, action or alert with the id it had, and every consumer drops the repeat.
"""

from __future__ import annotations

import hashlib


def stable_id(prefix: str, *parts: object) -> str:
    """``prefix-`` + 24 hex chars of SHA-256 over the parts (joined unambiguously)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()
    return f"{prefix}-{digest[:24]}"


def finding_id(detector: str, rule: str, scope_key: str, *evidence: object) -> str:
    return stable_id("fnd", detector, rule, scope_key, *evidence)


def operation_id(host_id: str, operation: str, finding: str) -> str:
    return stable_id("op", host_id, operation, finding)


def action_id(subject: str, kind: str, operation: str, cause: str) -> str:
    """Hash of host (or domain), action kind, operation and the finding/operation it follows from."""
    return stable_id("act", subject, kind, operation, cause)


def alert_id(alertname: str, *parts: object) -> str:
    return stable_id("alr", alertname, *parts)


def dead_letter_id(topic: str, partition: int, offset: int) -> str:
    return stable_id("dlq", topic, partition, offset)


def stable_unit(*parts: object) -> float:
    """A number in [0, 1) from the parts, the same on every worker and replay (a seeded draw)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64
