"""The local Apache Kafka broker: fetched with Maven, run as a single KRaft node."""

from fleetpulse.broker.errors import (
    BrokerError,
    BrokerStartError,
    JarResolutionError,
    PortInUseError,
    ToolMissingError,
)
from fleetpulse.broker.on_demand import ensure_running, own_broker, stop_if_started_within
from fleetpulse.broker.process import BrokerStatus, LocalBroker
from ground.settings.broker import BrokerSettings

__all__ = [
    "BrokerError",
    "BrokerSettings",
    "BrokerStartError",
    "BrokerStatus",
    "JarResolutionError",
    "LocalBroker",
    "PortInUseError",
    "ToolMissingError",
    "ensure_running",
    "own_broker",
    "stop_if_started_within",
]
