"""Small fleets for the twin: one cluster, every host installed at the start, chosen faults only."""

from __future__ import annotations

from typing import Any

import pytest

from producers.config import FleetConfig

START_TS = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def fleet_config(*, hosts: int, job_hosts: int, rate_per_gpu_day: float, **sections: Any) -> FleetConfig:
    """A fleet whose only random faults are job interruptions without a hardware signal (``software``)."""
    data: dict[str, Any] = {
        "name": "twin-test",
        "clusters": [{"name": "c", "fabric": "roce", "hosts": hosts}],
        "install": {"arriving_fraction": 0.0},
        "failures": {
            "interruptions_per_gpu_day": rate_per_gpu_day,
            "cause_mix": {"software": 1.0},
            "cause_kinds": {},
            "early_life_kinds": [],
            "wearout_scale_days": None,
        },
        "lemons": {"fraction": 0.0},
        "slow": {"fraction": 0.0},
        "jobs": {"sizes_hosts": [job_hosts]},
    }
    data.update(sections)
    return FleetConfig.model_validate(data)


@pytest.fixture
def make_fleet_config() -> Any:
    return fleet_config
