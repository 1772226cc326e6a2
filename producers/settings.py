"""Simulator settings (section ``[simulator]`` / ``FLEETPULSE_SIMULATOR__*``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class SimulatorSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    preset: str = "small"
    seed: int = 7
