"""A log tailer asks the log's end on one connection of its own, however many callers catch up at once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer

import streams.tailer
from schemas import Codec
from streams.tailer import LogTailer
from tests.conftest import KafkaCluster

pytestmark = pytest.mark.integration


class CountedConsumer(AIOKafkaConsumer):  # type: ignore[misc]
    """The real consumer, counted: how many connections the tailer opened."""

    made = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        CountedConsumer.made += 1
        super().__init__(*args, **kwargs)


def test_callers_catching_up_at_once_share_one_connection_and_none_fails(
    kafka: KafkaCluster, topic_factory: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stage and the planner catching up together each made one; the loser stopped its own just after it
    started, and aiokafka raised CancelledError into it (the errors agent crashed under load)."""
    topic = topic_factory(partitions=2)
    monkeypatch.setattr(streams.tailer, "AIOKafkaConsumer", CountedConsumer)
    client = kafka.settings.kafka.aiokafka(kafka.settings.bootstrap_servers)
    tailer = LogTailer(topic, client, lambda record: None, Codec())

    async def run() -> None:
        task = asyncio.create_task(tailer.run())
        try:
            await asyncio.gather(*(tailer.catch_up() for _ in range(5)))
            await asyncio.gather(*(tailer.catch_up() for _ in range(5)))
        finally:
            tailer.stop()
            await task

    CountedConsumer.made = 0
    asyncio.run(run())
    assert CountedConsumer.made == 2  # the follower and the one that asks for the end
