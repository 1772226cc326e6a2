"""Messages between detection stages are typed and versioned, and anything else is refused by name."""

from __future__ import annotations

import json

import msgspec
import pytest

from streams.core.messages import MESSAGE_VERSION, PlanFinding, PlanTick, planner_message, to_wire


def test_planner_messages_round_trip_through_json() -> None:
    for message in (
        PlanFinding("d1", {"event_id": "f1", "host_id": "h1"}),
        PlanTick("d2", 1_700_000_000_000),
    ):
        wire = json.loads(json.dumps(to_wire(message)))  # what Faust's JSON serializer carries
        assert wire["v"] == MESSAGE_VERSION
        assert planner_message(wire) == message


def test_the_kind_is_the_tag() -> None:
    assert to_wire(PlanTick("d", 5))["type"] == "tick"
    assert isinstance(planner_message({"type": "finding", "domain": "d", "finding": {}}), PlanFinding)


@pytest.mark.parametrize(
    "value",
    [
        {"type": "bundle", "domain": "d"},  # another stage's message
        {"type": "tick", "domain": "d"},  # no ts
        {"type": "tick", "domain": "d", "ts": "soon"},
        {"domain": "d", "ts": 1},  # untagged
        "tick",
    ],
)
def test_anything_else_is_refused_with_the_reason(value: object) -> None:
    with pytest.raises(msgspec.ValidationError):
        planner_message(value)
