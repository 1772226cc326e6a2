"""One start/end pairing for every reader of spans: stable for equal times, oldest open start first."""

from __future__ import annotations

from schemas.spans import Edge, pair_spans, step_closes, step_key


def edges(*rows: tuple[str, int, bool]) -> list[Edge[int]]:
    return [Edge(key, ts, opens, seq, seq) for seq, (key, ts, opens) in enumerate(rows)]


def test_an_end_at_its_starts_time_closes_it_whatever_the_row_order() -> None:
    for rows in ((("a", 5, True), ("a", 5, False)), (("a", 5, False), ("a", 5, True))):
        spans, orphans = pair_spans(edges(*rows))
        assert orphans == []
        assert [(s.start.ts, s.end.ts if s.end else None) for s in spans] == [(5, 5)]


def test_back_to_back_spans_and_the_oldest_open_start_first() -> None:
    spans, orphans = pair_spans(
        edges(("a", 0, True), ("a", 2, False), ("a", 2, True), ("a", 4, False), ("b", 1, False))
    )
    assert [(s.start.ts, s.end.ts if s.end else None) for s in spans] == [(0, 2), (2, 4)]
    assert [e.key for e in orphans] == ["b"]


def test_an_end_that_closes_all_and_repeated_starts_merged() -> None:
    items = [
        Edge("repair:T1", 0, True, 0, 0),
        Edge("repair:T1", 1, True, 1, 1),  # repeated while open: changes nothing
        Edge("rma:T2", 2, True, 2, 2),
        Edge("service:-", 3, False, 3, 3, closes_all=True),
    ]
    spans, _ = pair_spans(items, matches=lambda s, e: True, merge_repeats=True)
    assert [(s.start.key, s.start.ts, s.end.ts if s.end else None) for s in spans] == [
        ("repair:T1", 0, 3),
        ("rma:T2", 2, 3),
    ]


def test_operator_steps_close_their_ticket_or_their_group() -> None:
    assert step_closes(step_key("repair_started", "T1"), "repair_finished", step_key("repair_finished", "T1"))
    assert not step_closes(
        step_key("repair_started", "T1"), "repair_finished", step_key("repair_finished", "T2")
    )
    assert step_closes(step_key("repair_started", "T1"), "repair_finished", step_key("repair_finished", None))
    assert step_closes(
        step_key("rma_shipped", "T1"), "returned_to_service", step_key("returned_to_service", "T9")
    )
