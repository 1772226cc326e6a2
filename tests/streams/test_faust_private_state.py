"""The private Faust state the detect worker reads is there in the locked Faust.

``send_progress`` reads ``App._consumer`` and the consumer's ``_committed_offset`` (the offsets
committed at assignment: Faust keeps them nowhere public) through ``getattr`` with a default, so a
Faust that renamed either would not fail: every planner source would stay uncaught-up and hold its
findings until their windows close. These checks make such an upgrade fail here instead.
"""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path

from aiokafka import AIOKafkaConsumer
from faust.app.base import App
from faust.transport.consumer import Consumer

from ground.settings import Settings
from streams.faust_app import faust_app
from streams.faust_transport import FETCH_MAX_WAIT_MS, short_fetch_waits


def test_the_consumer_keeps_the_offsets_committed_at_assignment() -> None:
    assert "_committed_offset" in Consumer.__annotations__
    assert "self._committed_offset.update(" in inspect.getsource(Consumer)


def test_the_app_keeps_its_consumer() -> None:
    assert "_consumer" in App.__annotations__  # read without starting one (``App.consumer`` would create it)
    assert "self._consumer = consumer" in inspect.getsource(App)


def test_the_worker_consumer_fetch_waits_are_short(tmp_path: Path) -> None:
    """``streams.faust_transport`` sets aiokafka's private fetch wait before the consumer starts."""
    assert "fetch_max_wait_ms=self._fetch_max_wait_ms" in inspect.getsource(AIOKafkaConsumer.start)

    async def fetch_wait() -> int:
        app = faust_app(Settings(), tmp_path, None)
        short_fetch_waits(app)
        consumer = app.consumer._thread._create_worker_consumer(app.transport)  # type: ignore[attr-defined]
        try:
            return int(consumer._fetch_max_wait_ms)
        finally:
            await consumer.stop()  # never started: releases its client

    assert asyncio.run(fetch_wait()) == FETCH_MAX_WAIT_MS < 1500  # Faust's own: 1.5 s
