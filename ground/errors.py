"""Exception hierarchy of the ground layer; every package's own errors derive from ``FleetpulseError``.

FleetpulseError
├── ConfigError          bad settings; the message says what to fix
├── BrokerError          the local Kafka broker (fleetpulse.broker.errors)
│   ├── ToolMissingError     java / mvn not found or too old
│   ├── JarResolutionError   Maven could not fetch Kafka
│   ├── PortInUseError       the listener port is taken
│   └── BrokerStartError     the broker did not come up (carries the log tail)
├── TopicError           topic creation / admin failures
├── TopicReadError       a topic could not be read to its end (ground.kafka.reading)
└── LakeStorageError     a Delta table could not be opened or appended to (ground.delta)
"""

from __future__ import annotations


class FleetpulseError(Exception):
    """Base of every error fleetpulse raises on purpose."""


class ConfigError(FleetpulseError):
    """The configuration is invalid; raised at start-up with what to change."""


class TopicError(FleetpulseError):
    """Creating or inspecting topics failed."""


class TopicReadError(FleetpulseError):
    """A topic could not be read to its end (unreachable broker, missing topic, timeout)."""


class LakeStorageError(FleetpulseError):
    """A lake's Delta table could not be opened or written (permissions, full disk, a broken log)."""
