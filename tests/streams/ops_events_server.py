"""``POST /ops/events`` served by plain aiohttp on its own thread, as a detect worker serves it.

The handler is the Faust view's (``answer_operator_post``) with the worker's ``client_max_size``;
the broker is a recording stand-in (no Kafka is needed to refuse a request).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

from aiohttp import web

from ground.settings import Settings
from schemas import Codec
from streams.actions_input import ActionsInput
from streams.operator_events import MAX_STEP_BYTES
from streams.web import OperatorSteps, answer_operator_post


class RecordingTopic:
    def __init__(self) -> None:
        self.sent: list[tuple[bytes, bytes]] = []

    async def send(self, *, key: bytes, value: bytes, force: bool) -> Any:
        self.sent.append((key, value))
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done


def fake_detect(token: str) -> Any:
    """What the endpoint uses (``OperatorSteps``): the ops token, the codec, the inventory, and an
    actions topic that records (``actions_topic``, the one the tests read)."""
    topic = RecordingTopic()
    settings = Settings.model_validate({"detect": {"ops_token": token}})
    actions = ActionsInput(settings.detect.ops_token, Codec(), topic)  # type: ignore[arg-type]
    return SimpleNamespace(steps=OperatorSteps(actions, SimpleNamespace(hosts={})), actions_topic=topic)  # type: ignore[arg-type]


@contextlib.contextmanager
def ops_events_server(detect: Any) -> Iterator[tuple[str, int]]:
    """(URL, port) of ``POST /ops/events`` answered for ``detect.steps`` until the block ends."""
    loop = asyncio.new_event_loop()

    async def handler(request: web.Request) -> web.Response:
        status, body = await answer_operator_post(detect.steps, request)
        return web.json_response(body, status=status)

    async def start() -> tuple[web.AppRunner, int]:
        app = web.Application(client_max_size=MAX_STEP_BYTES)
        app.router.add_post("/ops/events", handler)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        return runner, site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    runner, port = loop.run_until_complete(start())
    thread = threading.Thread(target=loop.run_forever, name="ops-events", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/ops/events", port
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.run_until_complete(runner.cleanup())
        loop.close()
