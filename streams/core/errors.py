"""Exception hierarchy of the detection core (``streams``).

StreamsError
├── PolicyError          the policy file is invalid; the message names the bad key (also a ConfigError)
├── InvalidRecordError   a decoded record fails a semantic check (goes to the DLQ, never raised to Faust)
├── WorkerError          a detect worker could not start or stopped unexpectedly
└── CampaignError        a change campaign's step cannot be taken (unknown campaign, wrong status, bad change)
"""

from __future__ import annotations

from ground.errors import ConfigError, FleetpulseError


class StreamsError(FleetpulseError):
    """Base of every error the streams package raises on purpose."""


class PolicyError(StreamsError, ConfigError):
    """The detection policy is invalid: ``key`` is the dotted path of the offending entry."""

    def __init__(self, key: str, message: str, path: str | None = None) -> None:
        self.key = key
        self.path = path
        where = f" in {path}" if path else ""
        super().__init__(f"policy{where}: {key}: {message}")


class InvalidRecordError(StreamsError):
    """A record decoded but is not believable; ``reason`` is short and machine-friendly."""

    def __init__(self, reason: str, *, host_id: str | None = None, event_type: str | None = None) -> None:
        self.reason = reason
        self.host_id = host_id
        self.event_type = event_type
        super().__init__(reason)


class WorkerError(StreamsError):
    """A detect worker failed to start, or exited with an error."""


class CampaignError(StreamsError):
    """A person's step on a change campaign cannot be taken; the message says why."""
