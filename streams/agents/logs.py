"""The log tailers as a task: the inventory, the fleet's actions and the findings, read into memory."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import faust

from streams.tailer import WorkerLogs, catch_up_retrying


@dataclass(frozen=True)
class LogParts:
    """The logs the worker folds, and the event set once the inventory has been read to its end."""

    logs: WorkerLogs
    inventory_known: asyncio.Event


def register_tailers(app: faust.App, parts: LogParts) -> None:
    logs = parts.logs

    @app.task
    async def tailers() -> None:
        await asyncio.gather(logs.inventory.run(), logs.actions.run(), logs.findings.run(), inventory_read())

    async def inventory_read() -> None:
        await catch_up_retrying(logs.inventory)
        parts.inventory_known.set()
