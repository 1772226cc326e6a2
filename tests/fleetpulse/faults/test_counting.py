"""Pure counting of the fault suite: ids lost and repeated, RMAs, events, alerts, poison in the DLQ."""

from __future__ import annotations

from fleetpulse.faults.counting import (
    compare_ids,
    count_alerts,
    count_events,
    dlq_share,
    duplicate_rmas,
    judge_actions,
)
from tests.fleetpulse.faults.factories import action, chain, finding


def test_compare_ids_counts_lost_extra_and_repeats() -> None:
    c = compare_ids(["a", "b", "c"], ["a", "a", "c", "d"])
    assert (c.lost, c.extra, c.duplicate_records, c.reference, c.distinct, c.records) == (
        ["b"],
        ["d"],
        1,
        3,
        3,
        4,
    )


def test_duplicate_rmas_per_cause_and_in_total() -> None:
    ref = [action("r1", "rma_opened", "h1")]
    assert (
        duplicate_rmas(ref, [action("r1", "rma_opened", "h1"), action("r1", "rma_opened", "h1")]) == 0
    )  # a replay
    assert duplicate_rmas(ref, [action("r1", "rma_opened", "h1"), action("r2", "rma_opened", "h1")]) == 1
    assert duplicate_rmas(ref, [action("r1", "rma_opened", "h1"), action("r3", "rma_opened", "h2")]) == 1
    assert (
        duplicate_rmas(ref, [action("r9", "rma_opened", "h1")]) == 0
    )  # another id, same count: not a duplicate


def test_count_events_against_the_manifest() -> None:
    rec = [{"event_type": "XidRaised", "event_id": i} for i in ("a", "b", "b")]
    got = count_events({"XidRaised": 3, "HostSampled": 1}, rec)
    assert (got.expected, got.records, got.unique, got.lost, got.duplicated) == (4, 3, 2, 2, 1)


def test_count_alerts_separates_wire_duplicates_from_double_acceptance() -> None:
    got = count_alerts(["a", "b", "c"], ["a", "b", "b"], wire_duplicates=4)
    assert (got.produced, got.received, got.lost, got.wire_duplicates, got.accepted_twice) == (3, 2, 1, 4, 1)


def dead_letter(value: bytes, reason: str = "magic byte is 7", error_type: str = "FramingError") -> dict:
    return {"payload": {"original_value": value, "reason": reason, "error_type": error_type}}


def test_dlq_share_matches_original_bytes_and_needs_a_reason() -> None:
    poison = {b"p1": "bad_framing", b"p2": "absurd_value", b"p3": "future_ts", b"p4": "future_ts"}
    dlq = [
        dead_letter(b"p1"),
        dead_letter(b"p1"),  # dead-lettered twice (a replay) counts once
        dead_letter(b"p2", "gpu_out_of_range: gpu=999", "InvalidRecordError"),
        dead_letter(b"p3", ""),  # no reason: not counted
        dead_letter(b"good"),  # not poison
    ]
    got = dlq_share(poison, dlq)
    assert (got.poison, got.dead_lettered, got.without_reason, got.other) == (4, 2, 1, 1)
    assert got.share == 0.5
    assert got.reasons == {"FramingError": 1, "gpu_out_of_range": 1}
    assert got.by_kind["future_ts"] == {"sent": 2, "dead_lettered": 0}
    assert len(got.missing_examples) == 2


def test_judge_actions_sees_a_different_decision_without_a_broken_log() -> None:
    ref = chain("a")
    observed = chain("a")[:4]  # not yet repaired: a decision/timing difference, nothing dropped
    v = judge_actions(ref, observed, [finding("f1")])
    assert (v.lost, v.extra, v.broken, v.replays) == (3, 0, 0, 0)
    assert v.lost_kinds == {"repaired": 1, "verified": 1, "returned": 1}


def test_judge_actions_counts_a_dropped_step() -> None:
    ref = chain("a")
    observed = [a for a in chain("a") if a["payload"]["kind"] != "drained"]
    v = judge_actions(ref, observed, [finding("f1")])
    assert v.lost == 1 and v.broken == 2  # drain_requested lost its successor; rma_opened its cause
