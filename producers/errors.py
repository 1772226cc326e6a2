"""Exception hierarchy of the simulator.

FleetpulseError (ground.errors)
└── SimulatorError          anything the simulator raises on purpose
    ├── FleetConfigError    a fleet preset / config file is missing or invalid (says what to fix)
    ├── SinkError           a sink could not write (path, table)
    └── DeliveryError       Kafka did not acknowledge some records (topic, count, first error)
"""

from __future__ import annotations

from ground.errors import FleetpulseError


class SimulatorError(FleetpulseError):
    """Base of every error the simulator raises on purpose."""


class FleetConfigError(SimulatorError):
    """A fleet preset or config file is missing or invalid."""

    def __init__(self, message: str, source: str | None = None) -> None:
        super().__init__(f"{source}: {message}" if source else message)
        self.source = source


class SinkError(SimulatorError):
    """A sink failed to write events."""

    def __init__(self, message: str, *, sink: str, target: str | None = None) -> None:
        super().__init__(f"{sink} sink{f' ({target})' if target else ''}: {message}")
        self.sink = sink
        self.target = target


class DeliveryError(SinkError):
    """Some records were not acknowledged by Kafka: the run must not be trusted."""

    def __init__(self, failed: int, sent: int, first_error: str, *, topics: list[str]) -> None:
        super().__init__(
            f"{failed} of {sent} records were not delivered; first error: {first_error}",
            sink="kafka",
            target=", ".join(topics),
        )
        self.failed = failed
        self.sent = sent
        self.first_error = first_error
