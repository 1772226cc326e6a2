"""fleetpulse: event-sourced telemetry and failure analytics for large GPU fleets.

This package is the application shell, the top layer: the ``fleetpulse`` command, the demo, the
part supervisor, the local Kafka broker and the fault suite. The parts it drives are the sibling
packages ``producers``, ``streams`` and ``analytics``, standing on ``ground`` and ``schemas``.
"""

# Settings live in ``ground.settings``: not re-exported here, so that importing the shell
# (``fleetpulse --help``) does not load pydantic.
from ground.errors import ConfigError, FleetpulseError

__all__ = ["ConfigError", "FleetpulseError"]
__version__ = "0.1.0"
