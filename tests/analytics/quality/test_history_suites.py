"""The incidents and operator_events suites run in great-expectations and catch what they promise."""

from __future__ import annotations

import datetime as dt
from typing import Any

from analytics.quality.gate import validate_batch
from schemas import IncidentReported, OperatorEventRecorded
from schemas.arrow import to_table

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
T0 = 1_760_000_000_000


def incident(i: int, **payload: Any) -> dict[str, Any]:
    p = {
        "cause": "faulty_gpu",
        "source_class": "GPU/lost",
        "source_text": "GPU lost",
        "component": "3",
        "component_kind": "gpu",
        "start_ts": T0 + i,
        "end_ts": T0 + i + 1000,
    }
    p.update(payload)
    return IncidentReported(event_id=f"i{i}", host_id="h1", cluster="c", ts=T0 + i, payload=p).to_record()


def operator_event(i: int, **payload: Any) -> dict[str, Any]:
    p = {"kind": "out_of_service", "actor": "ops", "reason": "", "ticket_id": "T-1", "cause": None}
    p.update(payload)
    return OperatorEventRecorded(
        event_id=f"o{i}", host_id="h1", cluster="c", ts=T0 + i, payload=p
    ).to_record()


def test_good_history_passes() -> None:
    inc = to_table("IncidentReported", [incident(0), incident(1, end_ts=None, component=None)])
    assert validate_batch("incidents", inc, NOW, ["h1"]).success
    ops = to_table("OperatorEventRecorded", [operator_event(0), operator_event(1, cause="psu")])
    assert validate_batch("operator_events", ops, NOW, ["h1"]).success


def test_bad_history_fails() -> None:
    ends_first = to_table("IncidentReported", [incident(0, end_ts=T0 - 5)])
    assert not validate_batch("incidents", ends_first, NOW, ["h1"]).success
    foreign_cause = to_table("IncidentReported", [incident(0, cause="gremlins")])
    assert not validate_batch("incidents", foreign_cause, NOW, ["h1"]).success
    unknown_host = to_table("IncidentReported", [incident(0)])
    assert not validate_batch("incidents", unknown_host, NOW, ["h2"]).success
    bad_kind = to_table("OperatorEventRecorded", [operator_event(0, kind="vanished")])
    assert not validate_batch("operator_events", bad_kind, NOW, ["h1"]).success
