"""The detector's /trains API: the ops token, a start, a step the status forbids, a rollback of nothing."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace
from typing import Any

from pydantic import SecretStr

from schemas import Codec
from streams.actions_input import ActionsInput
from streams.core.fleet.lifecycle import FleetState, apply_logged
from streams.operator_events import MAX_STEP_BYTES
from streams.trains.web import TrainsInput, campaign_command


class Topic:
    def __init__(self, state: FleetState) -> None:
        self.state, self.sent = state, []

    async def send(self, *, key: bytes, value: bytes, force: bool) -> Any:
        record = Codec().decode(value).record
        self.sent.append(record)
        apply_logged(self.state, record)  # what the worker's tailer would fold
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done


class Detect(TrainsInput):
    """The /trains views' input, and the fleet state the recording topic folds into (what the tests read)."""

    @property
    def fleet(self) -> FleetState:
        return self.reads.fleet


def detect() -> Any:
    state = FleetState()
    return Detect(SimpleNamespace(fleet=state), ActionsInput(SecretStr("s3cret"), Codec(), Topic(state)))  # type: ignore[arg-type]


AUTH = {"Authorization": "Bearer s3cret"}


def call(
    d: Any,
    headers: dict[str, str],
    body: dict[str, Any],
    campaign: str | None = None,
    step: str | None = None,
) -> tuple[int, dict[str, Any]]:
    async def read() -> bytes:
        return json.dumps(body).encode()

    return asyncio.run(campaign_command(d, headers, read, campaign, step))


def test_the_api_needs_the_ops_token() -> None:
    status, body = call(detect(), {}, {"change": "driver=560.35", "actor": "ana"})
    assert status == 401 and "token" in body["error"]


def test_the_token_is_checked_before_the_body_is_read_and_the_body_is_bounded() -> None:
    async def never() -> bytes:
        raise AssertionError("the body was read before the token was checked")

    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Bearer \udcff"}):
        assert asyncio.run(campaign_command(detect(), headers, never, None, None))[0] == 401
    status, body = asyncio.run(
        campaign_command(detect(), {**AUTH, "Content-Length": str(10**9)}, never, None, None)
    )
    assert status == 413, body
    status, _ = call(detect(), AUTH, {"change": "driver=560.35", "actor": "x" * (MAX_STEP_BYTES + 1)})
    assert status == 413
    deep = b'{"change": "driver=560.35", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"

    async def read_deep() -> bytes:
        return deep

    status, _ = asyncio.run(campaign_command(detect(), AUTH, read_deep, None, None))
    assert status in (400, 413)


def test_start_then_steps_as_the_status_allows() -> None:
    d = detect()
    status, body = call(d, AUTH, {"change": "driver=560.35", "actor": "ana", "canary": 2})
    assert status == 202
    [cid] = body["campaign_ids"]
    assert d.fleet.trains.campaigns[cid].canary == 2
    assert call(d, AUTH, {"actor": "ana"}, cid, "resume")[0] == 409  # running: nothing to resume
    assert call(d, AUTH, {"actor": "ana"}, cid, "pause")[0] == 202
    assert d.fleet.trains.campaigns[cid].status == "paused"
    assert call(d, AUTH, {"actor": "ana"}, cid, "explode")[0] == 400
    assert call(d, AUTH, {"change": "bios=1", "actor": "ana"})[0] == 400
    status, _ = call(d, AUTH, {"actor": "ana"}, cid, "rollback")  # changed no host: it is only aborted
    assert status == 202 and d.fleet.trains.campaigns[cid].status == "aborted"
