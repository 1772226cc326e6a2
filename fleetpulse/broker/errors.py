"""Errors of the local broker; each message says what failed and what to do about it.

BrokerError
├── ToolMissingError     java / mvn not found or too old
├── JarResolutionError   Maven could not fetch Kafka (carries mvn's output tail)
├── PortInUseError       a listener port is taken by another process
└── BrokerStartError     the broker did not come up (carries the log tail)
"""

from __future__ import annotations

from ground.errors import FleetpulseError


class BrokerError(FleetpulseError):
    """Base of every error raised while managing the local Kafka broker."""


class ToolMissingError(BrokerError):
    """``java`` or ``mvn`` is missing from PATH, or Java is older than Kafka needs."""

    def __init__(self, tool: str, message: str) -> None:
        super().__init__(message)
        self.tool = tool


class JarResolutionError(BrokerError):
    """Maven failed to resolve the Kafka jars; ``output_tail`` holds the end of its output."""

    def __init__(self, message: str, output_tail: str = "") -> None:
        super().__init__(f"{message}\n{output_tail}" if output_tail else message)
        self.output_tail = output_tail


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
