"""Typed, versioned messages between detection stages on the worker's internal topics.

Tagged msgspec structs (the ``type`` field names the kind, ``v`` the version): a stage decodes
what it reads into one of them and fails loudly on anything else, instead of telling dicts
apart by a string. They travel as JSON through Faust's JSON serializer (``to_wire``).
"""

from __future__ import annotations

from typing import Any

import msgspec

MESSAGE_VERSION = 1


class PlanFinding(msgspec.Struct, frozen=True, tag="finding", tag_field="type"):
    """errors or cluster stage → planner: a finding for the planner of its maintenance domain."""

    domain: str
    finding: dict[str, Any]  # the FindingRaised record, as the findings topic carries it
    v: int = MESSAGE_VERSION


class PlanTick(msgspec.Struct, frozen=True, tag="tick", tag_field="type"):
    """A worker's timer → planner: work may be due in this domain at event time ``ts``."""

    domain: str
    ts: int
    v: int = MESSAGE_VERSION


class SourceMark(msgspec.Struct, frozen=True, array_like=True):
    """One source's progress: no finding it sends later is at or before ``ts``; ``idle``: caught up."""

    source: str  # errors/<partition> or cluster/<partition>
    ts: int | None
    idle: bool


class PlanProgress(msgspec.Struct, frozen=True, tag="progress", tag_field="type"):
    """A worker's timer → every planner partition: how far the sources it owns have got.

    Sent after the findings those sources sent, on the same partitions, so a planner that has it
    has every finding they sent up to those times (``streams.core.planning.order``).
    """

    marks: list[SourceMark]
    v: int = MESSAGE_VERSION


PlannerMessage = PlanFinding | PlanTick | PlanProgress


def to_wire(message: msgspec.Struct) -> dict[str, Any]:
    """The JSON-able form a Faust topic with the JSON serializer sends."""
    out: dict[str, Any] = msgspec.to_builtins(message)
    return out


def planner_message(value: Any) -> PlannerMessage:
    """Decode what the planner topic delivered; ``msgspec.ValidationError`` names what is wrong."""
    return msgspec.convert(value, PlannerMessage)  # type: ignore[arg-type]
