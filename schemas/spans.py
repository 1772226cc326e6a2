"""Start/end pairing: one rule for every reader of spans (imported incidents, operators' steps, outages).

Edges sort by time, a start before an end at the same time (a zero-length span is its start and its
end, never an end with nothing open before it), then by their order in the source. An end closes the
oldest open start it matches, or every one (an operator's ``returned_to_service``); with
``merge_repeats`` a start whose key is already open changes nothing (a step repeated while open).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

from schemas.taxonomy import RETURNED, STEP_GROUP

T = TypeVar("T")


def step_key(kind: str, ticket: str | None) -> str:
    """An operator's spell: its group and ticket (``-`` when none)."""
    return f"{STEP_GROUP[kind]}:{ticket or '-'}"


def step_closes(open_key: str, close_kind: str, close_key: str) -> bool:
    """Whether a closing step closes an open spell: ``returned_to_service`` closes every one on the
    host, any other its own group and ticket, or its group when it names no ticket."""
    if close_kind == RETURNED:
        return True
    group, ticket = close_key.split(":", 1)
    return open_key == close_key or (ticket == "-" and open_key.startswith(f"{group}:"))


@dataclass(frozen=True, slots=True)
class Edge(Generic[T]):
    """One start or end: ``seq`` is its order in the source (a row number, an offset)."""

    key: Hashable
    ts: int
    opens: bool
    seq: int
    item: T
    closes_all: bool = False


@dataclass(frozen=True, slots=True)
class Span(Generic[T]):
    start: Edge[T]
    end: Edge[T] | None  # None: still open


def edge_order(edge: Edge[T]) -> tuple[int, int, int]:
    """Time, then a start before an end, then source order: stable for equal times."""
    return (edge.ts, 0 if edge.opens else 1, edge.seq)


def pair_spans(
    edges: Iterable[Edge[T]],
    *,
    matches: Callable[[Edge[T], Edge[T]], bool] | None = None,
    merge_repeats: bool = False,
) -> tuple[list[Span[T]], list[Edge[T]]]:
    """(spans in start order, open ones with no end; ends that found nothing open).

    ``matches(start, end)``: whether an end may close a start (default: the same key).
    """
    open_: dict[Hashable, list[Edge[T]]] = {}  # by key, oldest first
    closed: list[Span[T]] = []
    orphans: list[Edge[T]] = []
    for edge in sorted(edges, key=edge_order):
        if edge.opens:
            starts = open_.setdefault(edge.key, [])
            if not (merge_repeats and starts):
                starts.append(edge)
            continue
        if matches is None:
            hits = list(open_.get(edge.key, ()))
        else:
            hits = sorted(
                (s for starts in open_.values() for s in starts if matches(s, edge)), key=edge_order
            )
        if not hits:
            orphans.append(edge)
            continue
        for start in hits if edge.closes_all else hits[:1]:
            open_[start.key].remove(start)
            closed.append(Span(start, edge))
    spans = closed + [Span(s, None) for starts in open_.values() for s in starts]
    spans.sort(key=lambda s: edge_order(s.start))
    return spans, orphans
