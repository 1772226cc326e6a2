"""What the worker's HTTP API writes operators' records to ``fleet.actions`` with: the ops token that
guards every POST, the codec, and the actions topic (a send is acknowledged before it returns)."""

from __future__ import annotations

from dataclasses import dataclass

import faust
from pydantic import SecretStr

from schemas import Codec


@dataclass(frozen=True)
class ActionsInput:
    """``token`` is ``detect.ops_token`` (None: every POST is refused); ``topic`` is the worker's
    ``fleet.actions`` Faust topic."""

    token: SecretStr | None
    codec: Codec
    topic: faust.TopicT

    async def send(self, key: bytes, value: bytes) -> None:
        """Put ``value`` on the log; returns once the broker has acknowledged it."""
        sent = await self.topic.send(key=key, value=value, force=True)
        await sent
