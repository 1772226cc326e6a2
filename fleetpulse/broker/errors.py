"""Errors of the local broker; each message says what failed and what to do about it.

BrokerError
├── PortInUseError       a listener port is taken by another process
└── BrokerStartError     the broker did not come up (carries the log tail)

ToolMissingError (java / mvn not found or too old) and JarResolutionError (Maven could not
fetch the jars, with mvn's output tail) come from ``fleetpulse.maven``, shared with Spark's
Delta jars; they are re-exported here.
"""

from __future__ import annotations

from fleetpulse.maven import JarResolutionError, ToolMissingError
from ground.errors import FleetpulseError

__all__ = ["BrokerError", "BrokerStartError", "JarResolutionError", "PortInUseError", "ToolMissingError"]


class BrokerError(FleetpulseError):
    """Base of every error raised while managing the local Kafka broker."""


class PortInUseError(BrokerError):
    """A port the broker needs is already bound by another process."""

    def __init__(self, host: str, port: int, message: str) -> None:
        super().__init__(message)
        self.host = host
        self.port = port


class BrokerStartError(BrokerError):
    """The broker process exited or did not answer in time; ``log_tail`` shows why."""

    def __init__(self, message: str, log_tail: str = "") -> None:
        super().__init__(f"{message}\n{log_tail}" if log_tail else message)
        self.log_tail = log_tail
