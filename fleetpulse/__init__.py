"""fleetpulse: event-sourced telemetry and failure analytics for large GPU fleets.

This package is the application shell, the top layer: the ``fleetpulse`` command, the demo, the
part supervisor, the local Kafka broker and the fault suite. The parts it drives are the sibling
packages ``producers``, ``streams`` and ``analytics``, standing on ``ground`` and ``schemas``.
"""

from ground.errors import ConfigError, FleetpulseError
from ground.settings import Settings

__all__ = ["ConfigError", "FleetpulseError", "Settings"]
__version__ = "0.1.0"
