"""Reading the campaigns from ``fleet.actions`` and putting a person's steps on it (the commands' I/O shell)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka import KafkaProducer
from kafka.errors import KafkaError

from schemas import Codec
from streams.core.errors import StreamsError
from streams.core.fleet.lifecycle import FleetState, apply_logged
from streams.manual import read_log

if TYPE_CHECKING:
    from ground.settings import Settings


def read_fleet(settings: Settings, timeout_s: float = 30.0) -> FleetState:
    """The fleet state folded from the whole of fleet.actions (campaigns included), as a worker folds it."""
    state = FleetState()

    def fold(record: dict[str, Any]) -> None:
        apply_logged(state, record)

    read_log(settings, fold, timeout_s)
    return state


def send_records(settings: Settings, records: list[dict[str, Any]]) -> None:
    """Put records on fleet.actions, acknowledged by the broker before this returns."""
    codec = Codec()
    try:
        producer = KafkaProducer(
            **settings.kafka.kafka_python(settings.bootstrap_servers), acks="all", enable_idempotence=True
        )
        try:
            for record in records:
                producer.send(
                    settings.topics.actions.name,
                    key=str(record["host_id"]).encode(),
                    value=codec.encode(record),
                ).get(timeout=30)
        finally:
            producer.close()
    except KafkaError as exc:
        raise StreamsError(f"cannot record on {settings.topics.actions.name}: {exc}") from exc
