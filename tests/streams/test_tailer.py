"""The log tailers every worker runs: one bad record in a log is skipped and counted, never fatal."""

from __future__ import annotations

from typing import Any

import pytest

from schemas import Codec
from streams.core.actions import Action
from streams.core.fleet.lifecycle import FleetState, apply
from streams.tailer import LogTailer
from tests.streams.factories import xid

CODEC = Codec()


def action(action_id: str = "a1") -> Action:
    return Action(
        action_id=action_id,
        kind="suspected",
        host_id="h1",
        cluster="c0",
        domain="d0",
        operation="reboot",
        ts=1_000,
        finding_id="f1",
        rule="r1",
    )


def actions_tailer(state: FleetState) -> LogTailer:
    return LogTailer(
        "fleet.actions",
        {},
        lambda r: apply(state, Action.from_record(r)),
        CODEC,
        event_type="MaintenanceActionRecorded",
    )


def test_a_record_of_another_event_type_is_skipped_and_the_next_action_still_applies() -> None:
    state = FleetState()
    tailer = actions_tailer(state)
    tailer.feed(CODEC.encode(xid(79)))
    tailer.feed(CODEC.encode(action().to_record()))
    assert (tailer.foreign, tailer.records) == (1, 1)
    assert "a1" in state.applied


def test_undecodable_bytes_and_tombstones_are_skipped() -> None:
    state = FleetState()
    tailer = actions_tailer(state)
    tailer.feed(b"\x00not avro")
    tailer.feed(None)
    tailer.feed(CODEC.encode(action().to_record()))
    assert (tailer.undecodable, tailer.records) == (1, 1)


def test_a_record_the_state_rejects_is_counted_and_does_not_stop_the_tailer() -> None:
    seen: list[str] = []

    def on_record(record: dict[str, Any]) -> None:
        if record["event_id"] == "bad":
            raise KeyError("maintenance_domain")
        seen.append(record["event_id"])

    tailer = LogTailer("fleet.actions", {}, on_record, CODEC)
    for aid in ("a1", "bad", "a2"):
        tailer.feed(CODEC.encode(action(aid).to_record()))
    assert (tailer.rejected, tailer.records, seen) == (1, 2, ["a1", "a2"])


def test_an_action_is_only_read_from_a_maintenance_action_record() -> None:
    with pytest.raises(ValueError, match="not a maintenance action"):
        Action.from_record(xid(79))
