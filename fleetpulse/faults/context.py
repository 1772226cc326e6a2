"""What every scenario shares: the broker under test, the base settings, the output folder, progress.

Scenarios never start or own the broker: they get one (``BrokerControl``: a bootstrap address
and a ``restart``, ``stop`` and ``start``), so the CLI can hand them a broker it started and the tests one from the
``local_broker_factory`` fixture.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from producers.config import load_fleet_config
from producers.runner import SimulationRequest, run_simulation

if TYPE_CHECKING:
    from ground.settings import Settings
    from producers.runner import SimulationResult


class BrokerControl(Protocol):
    """The broker a scenario runs against (``fleetpulse.broker.LocalBroker`` fits)."""

    @property
    def bootstrap_servers(self) -> str: ...
    def restart(self) -> Any: ...
    def stop(self) -> Any: ...
    def start(self) -> Any: ...


@dataclass
class FaultContext:
    base: Settings
    broker: BrokerControl
    out_dir: Path
    run_id: str
    command: str = ""
    preset: str = "small"
    days: float = 14.0
    seed: int = 7
    say: Callable[[str], None] = field(default=lambda message: None)

    @property
    def bootstrap(self) -> str:
        return self.broker.bootstrap_servers

    def folder(self, scenario: str) -> Path:
        path = self.out_dir / scenario
        path.mkdir(parents=True, exist_ok=True)
        return path

    def prefix(self, scenario: str, part: str = "") -> str:
        """A topic prefix no other scenario or run uses: ``<run_id>.<scenario>[.<part>].``."""
        return f"{self.run_id}.{scenario}." + (f"{part}." if part else "")


EXACT_DELIVERY = {"late_fraction": 0.0, "dropout_fraction": 0.0, "duplicate_fraction": 0.0}


def simulate(ctx: FaultContext, settings: Settings, truth: Path, **request: Any) -> SimulationResult:
    """The small fleet's history into the settings' Kafka topics, with ground truth in ``truth``.

    Delivered exactly (no simulated drops, duplicates or late events): the suite counts what the
    pipeline loses or duplicates under a fault, and the simulator's own transport noise would count
    as the pipeline's. Slow hosts are persistent: an intermittent host a few per cent slow is
    judged slow in one window or the next depending on which summaries arrived before the window
    closed, so a replay after a fault finds it under another finding id, which is no loss.
    """
    settings = settings.with_section("simulator", **EXACT_DELIVERY)
    fleet = load_fleet_config(ctx.preset)
    fleet = fleet.model_copy(update={"slow": fleet.slow.model_copy(update={"intermittent_fraction": 0.0})})

    fields: dict[str, Any] = {"fleet": fleet, "days": ctx.days, "seed": ctx.seed, "sink": "kafka"}
    fields.update(request)
    return run_simulation(settings, SimulationRequest(truth_out=truth, **fields))


class Clock:
    """Seconds since the scenario started (for the notes and the duration column)."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()

    def __call__(self) -> float:
        return round(time.monotonic() - self.t0, 1)
