"""Exception hierarchy of the host agent.

FleetpulseError (ground.errors)
└── AgentError              anything the host agent raises on purpose
    ├── SourceError         a telemetry source could not be read (source, path); counted, never fatal
    └── SpoolError          the on-disk spool is unusable (path); fatal at start-up only
"""

from __future__ import annotations

from ground.errors import FleetpulseError


class AgentError(FleetpulseError):
    """Base of every error the host agent raises on purpose."""


class SourceError(AgentError):
    """A source (file, device, endpoint) could not be read."""

    def __init__(self, message: str, *, source: str, path: str | None = None) -> None:
        super().__init__(f"{source}{f' ({path})' if path else ''}: {message}")
        self.source = source
        self.path = path


class SpoolError(AgentError):
    """The spool database cannot be opened or written."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(f"spool {path}: {message}")
        self.path = path
