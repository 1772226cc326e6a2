"""Fault injection: run the pipeline under crashes, broker restarts, receiver outages and poison, and count the cost."""

from fleetpulse.faults.errors import FaultsError, ScenarioError, UnknownScenarioError
from fleetpulse.faults.results import GOALS, ScenarioResult

__all__ = [
    "GOALS",
    "FaultsError",
    "ScenarioError",
    "ScenarioResult",
    "UnknownScenarioError",
]
