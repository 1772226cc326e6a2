"""A person resumes a halted maintenance train: train_resumed lands on fleet.actions, once."""

from __future__ import annotations

import pytest

from ground.kafka import admin
from schemas import Codec
from streams.core.errors import StreamsError
from streams.core.fleet.lifecycle import FleetState
from streams.core.planning.planner import Planner
from streams.core.policy import load_policy
from streams.manual import read_actions, resume_train
from tests.streams import factories as f
from tests.streams.kafka_io import isolated_settings, produce

pytestmark = pytest.mark.integration


def test_resume_a_halted_train(kafka) -> None:  # type: ignore[no-untyped-def]
    settings = isolated_settings(kafka.settings)
    admin.create_topics(settings)
    policy = load_policy()
    planner, state = Planner(policy), FleetState()
    actions = []
    for n in range(3):  # 8 hosts: failure buffer 2, the third failure halts the train
        actions += planner.on_finding(state, f.finding(f"h{n}", ts=f.START_TS + n, action="rma"), "d0", 8)
    assert state.domains["d0"].halted
    codec = Codec()
    produce(settings, [("actions", b"d0", codec.encode(a.to_record())) for a in actions])

    resumed = resume_train(settings, policy, "d0", by="test")
    logged = read_actions(settings)
    assert [a.kind for a in logged].count("train_resumed") == 1
    assert resumed.caused_by == next(a.action_id for a in actions if a.kind == "train_halted")
    assert "test" in resumed.reason
    with pytest.raises(StreamsError, match="not halted"):
        resume_train(settings, policy, "d0", by="test")
    admin.delete_topics(settings, [s.name for s in settings.topics.all()])
