"""fleetpulse: event-sourced telemetry and failure analytics for large GPU fleets.

This package holds the shared core (settings, CLI, the local Kafka broker, topics);
the parts live in the sibling packages ``schemas``, ``producers``, ``streams`` and ``analytics``.
"""

from fleetpulse.errors import ConfigError, FleetpulseError
from fleetpulse.settings import Settings

__all__ = ["ConfigError", "FleetpulseError", "Settings"]
__version__ = "0.1.0"
