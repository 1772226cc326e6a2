"""Runs the chosen scenarios one after another and stamps each row with its command and date."""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from fleetpulse.broker import LocalBroker
from fleetpulse.faults.context import FaultContext
from fleetpulse.faults.detectors import free_port
from fleetpulse.faults.errors import UnknownScenarioError
from fleetpulse.faults.results import ScenarioResult
from fleetpulse.faults.scenarios import (
    broker_outage,
    broker_restart,
    disk_full,
    poison_flood,
    receiver_down,
    receiver_slow,
    worker_kill,
)

if TYPE_CHECKING:
    from fleetpulse.broker import LocalBroker
    from ground.settings import Settings

Scenario = Callable[[FaultContext], ScenarioResult]
SCENARIOS: dict[str, Scenario] = {
    worker_kill.NAME: worker_kill.run,
    broker_restart.NAME: broker_restart.run,
    receiver_down.NAME: receiver_down.run,
    poison_flood.NAME: poison_flood.run,
    broker_outage.NAME: broker_outage.run,
    receiver_slow.NAME: receiver_slow.run,
    disk_full.NAME: disk_full.run,
}


def check_names(names: Sequence[str]) -> list[str]:
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        raise UnknownScenarioError(
            f"unknown scenario(s) {', '.join(unknown)}; choose from {', '.join(SCENARIOS)}"
        )
    return list(dict.fromkeys(names)) or list(SCENARIOS)


def now_utc() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def run_scenario(ctx: FaultContext, name: str) -> ScenarioResult:
    (name,) = check_names([name])
    ran_at = now_utc()
    result = SCENARIOS[name](ctx)
    result.command, result.ran_at = ctx.command, ran_at
    return result


@contextlib.contextmanager
def own_broker(
    base: Settings, data_dir: Path, say: Callable[[str], None] = lambda m: None
) -> Iterator[LocalBroker]:
    """A LocalBroker of the fault run alone: free ports, data in ``data_dir``, stopped on exit."""

    port = free_port()
    controller = free_port()
    while controller == port:
        controller = free_port()
    settings = base.broker.model_copy(
        update={"port": port, "controller_port": controller, "data_dir": data_dir}
    )
    broker = LocalBroker(settings, reporter=say, die_with_caller=True)
    try:  # an interrupt while it starts stops it too (the JVM runs in a session of its own)
        broker.start()
        yield broker
    finally:
        broker.stop()
