"""Actions a person takes by hand: resume a maintenance train the planner halted.

The action goes to ``fleet.actions`` like any other (same deterministic id the planner would
use), so every worker folds it in and the planner drains the backlog within capacity again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kafka import KafkaProducer

from ground.errors import TopicReadError
from ground.kafka.reading import read_to_end
from schemas import Codec, MaintenanceActionRecorded
from streams.core.actions import Action
from streams.core.errors import StreamsError
from streams.core.fleet.lifecycle import LOG_EVENT_TYPES, FleetState, replay
from streams.core.planning.planner import Planner
from streams.core.policy import Policy
from streams.tailer import LogTailer

if TYPE_CHECKING:
    from ground.settings import Settings


def read_log(
    settings: Settings, on_record: Callable[[dict[str, Any]], None], timeout_s: float = 30.0
) -> None:
    """Hand every record of fleet.actions to ``on_record``, in partition order, as the workers read it."""
    # the same skipping rules as the workers' own reading of this log
    reader = LogTailer(
        settings.topics.actions.name,
        {},
        on_record,
        Codec(),
        event_type=LOG_EVENT_TYPES,  # incidents and operators' steps share the log: not foreign records
    )
    try:
        for rec in read_to_end(
            settings.bootstrap_servers, settings.kafka, settings.topics.actions.name, timeout_s=timeout_s
        ):
            reader.feed(rec.value)
    except TopicReadError as exc:
        raise StreamsError(str(exc)) from exc


def read_actions(settings: Settings, timeout_s: float = 30.0) -> list[Action]:
    """Every action on fleet.actions, in partition order (enough for a per-domain fold)."""
    out: list[Action] = []

    def keep(record: dict[str, Any]) -> None:
        if record["event_type"] == MaintenanceActionRecorded.EVENT_TYPE:
            out.append(Action.from_record(record))

    read_log(settings, keep, timeout_s)
    return out


def resume_train(
    settings: Settings, policy: Policy, domain: str, *, by: str, now_ms: int | None = None
) -> Action:
    """Record train_resumed for a halted domain; StreamsError if it is not halted."""

    state: FleetState = replay(read_actions(settings))
    if domain not in state.domains or not state.domains[domain].halted:
        halted = sorted(d for d, s in state.domains.items() if s.halted)
        raise StreamsError(f"domain {domain!r} is not halted (halted: {', '.join(halted) or 'none'})")
    last_ts = max((h.last_ts for h in state.hosts.values() if h.domain == domain), default=0)
    actions = Planner(policy).resume(state, domain, now_ms or last_ts, f"resumed by {by}")
    producer = KafkaProducer(**settings.kafka.kafka_python(settings.bootstrap_servers), acks="all")
    try:
        for action in actions:
            producer.send(
                settings.topics.actions.name, key=domain.encode(), value=Codec().encode(action.to_record())
            )
        producer.flush(30)
    finally:
        producer.close()
    return actions[0]
