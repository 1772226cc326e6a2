"""The synthetic GPU fleet: host agents with realistic failures, recorded ground truth, Kafka/lake sinks.

Public names resolve lazily, so importing ``ground.settings.simulator`` (done by the settings object
and thus by every CLI start) does not pull in numpy, pyarrow and scipy.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "DeliveryError": "producers.errors",
    "FleetConfigError": "producers.errors",
    "SimulatorError": "producers.errors",
    "SinkError": "producers.errors",
    "FleetConfig": "producers.config",
    "available_presets": "producers.config",
    "load_fleet_config": "producers.config",
    "SimulationRequest": "producers.runner",
    "SimulationResult": "producers.runner",
    "run_simulation": "producers.runner",
    "MemorySink": "producers.sinks",
    "NullSink": "producers.sinks",
    "ParquetSink": "producers.sinks",
    "Sink": "producers.sinks",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'producers' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
