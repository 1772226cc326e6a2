"""Exception hierarchy of the fault-injection suite.

FaultsError            base (a FleetpulseError: the CLI prints it as one line)
├── ScenarioError      a scenario could not run (a part died, a wait timed out); carries the scenario
└── UnknownScenarioError  a --scenario name that does not exist
"""

from __future__ import annotations

from ground.errors import FleetpulseError


class FaultsError(FleetpulseError):
    """Base of every error the fault suite raises on purpose."""


class ScenarioError(FaultsError):
    """A scenario could not be carried out (not a measured miss: the run itself failed)."""

    def __init__(self, scenario: str, message: str) -> None:
        self.scenario = scenario
        super().__init__(f"fault scenario {scenario}: {message}")


class UnknownScenarioError(FaultsError):
    """A scenario name that the suite does not have."""
