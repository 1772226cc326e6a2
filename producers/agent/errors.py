"""Exception hierarchy of the host agent.

FleetpulseError (ground.errors)
└── AgentError              anything the host agent raises on purpose
    └── SpoolError          the on-disk spool cannot be opened or written (path): the agent stops,
                            and its restart resumes from the last committed round (nothing lost)
"""

from __future__ import annotations

from ground.errors import FleetpulseError


class AgentError(FleetpulseError):
    """Base of every error the host agent raises on purpose."""


class SpoolError(AgentError):
    """The spool database cannot be opened or written."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(f"spool {path}: {message}")
        self.path = path
