"""Factories for simulator tests: fleet configs, fleets with their schedules, and small runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ground.settings import Settings
from producers.config import FleetConfig, load_fleet_config
from producers.fault_process import Calibration, calibrate, fault_schedule
from producers.fleet import DAY_MS, Fleet, build_fleet
from producers.noise import noise_schedule
from producers.runner import SimulationRequest, SimulationResult, run_simulation
from producers.schedule import Schedule
from producers.sinks.base import MemorySink

START = 1_735_689_600_000  # 2025-01-01T00:00Z


def config_with(base: FleetConfig | str = "small", **sections: Any) -> FleetConfig:
    """A config from a preset with some sections replaced or updated: ``config_with(lemons={"fraction": 0})``."""
    cfg = load_fleet_config(base) if isinstance(base, str) else base
    data = cfg.model_dump()
    for key, value in sections.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    return FleetConfig.model_validate(data)


class Built:
    def __init__(
        self, fleet: Fleet, calibration: Calibration, faults: Schedule, dropped: int, noise: Schedule
    ):
        self.fleet, self.calibration, self.faults, self.dropped, self.noise = (
            fleet,
            calibration,
            faults,
            dropped,
            noise,
        )


@pytest.fixture
def build() -> Callable[..., Built]:
    """``build(config_or_preset, days=30, seed=7)``: fleet, calibration and schedules (no events)."""

    def make(
        config: FleetConfig | str = "small", *, days: float = 30, seed: int = 7, noise: bool = True
    ) -> Built:
        cfg = load_fleet_config(config) if isinstance(config, str) else config
        fleet = build_fleet(cfg, seed, START, START + int(days * DAY_MS))
        cal = calibrate(fleet)
        faults, dropped = fault_schedule(fleet, cal)
        return Built(fleet, cal, faults, dropped, noise_schedule(fleet) if noise else Schedule.empty())

    return make


EXACT_DELIVERY = {"late_fraction": 0.0, "dropout_fraction": 0.0, "duplicate_fraction": 0.0}


@pytest.fixture
def settings() -> Settings:
    """The settings with transport noise off: these tests check the exact event contract (every
    sequence number once, counts equal to the truth); ``noisy_settings`` has the realistic defaults."""
    base = Settings.load()
    return base.model_copy(update={"simulator": base.simulator.model_copy(update=EXACT_DELIVERY)})


@pytest.fixture
def noisy_settings() -> Settings:
    return Settings.load()


@pytest.fixture
def simulate(settings: Settings, tmp_path: Path) -> Callable[..., tuple[SimulationResult, MemorySink]]:
    """``simulate(**SimulationRequest fields)`` into a MemorySink; truth goes to tmp_path/truth by default."""

    def run(
        *, keep_records: bool = True, keep_samples: bool = True, sink: Any = None, **fields: Any
    ) -> tuple[SimulationResult, MemorySink]:
        fields.setdefault("preset", "small")
        fields.setdefault("start_ts", START)
        fields.setdefault("truth_out", tmp_path / "truth")
        fields.setdefault("sink", "null")
        memory = sink or MemorySink(keep_records=keep_records, keep_samples=keep_samples)
        result = run_simulation(settings, SimulationRequest(**fields), sink=memory)
        return result, memory

    return run
