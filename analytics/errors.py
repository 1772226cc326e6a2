"""Errors of the analytics package; each carries the lake path, table, topic or offsets involved.

AnalyticsError (a FleetpulseError: the CLI prints it as one line)
├── LakeError                the Parquet lake: layout, reading, writing
│   └── LakeIntegrityError       manifest and files disagree in a way no rule resolves
├── ArchiverError            consuming Kafka into the lake (missing topics, broker down)
└── QualityError             great-expectations suites: missing or malformed suite files
"""

from __future__ import annotations

from ground.errors import FleetpulseError


class AnalyticsError(FleetpulseError):
    """Base of every error raised on purpose by the analytics package."""


class LakeError(AnalyticsError):
    """Reading or writing the lake failed; ``path`` names the file or folder."""

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message if path is None else f"{message} ({path})")
        self.path = path


class LakeIntegrityError(LakeError):
    """A file straddles the committed offset of its partition, or a compaction lost its output."""


class ArchiverError(AnalyticsError):
    """The archiver cannot run: topics missing, broker unreachable, partitions unassigned."""

    def __init__(self, message: str, topic: str | None = None) -> None:
        super().__init__(message)
        self.topic = topic


class QualityError(AnalyticsError):
    """A quality suite is missing or does not load; ``table`` names the lake table."""

    def __init__(self, message: str, table: str | None = None) -> None:
        super().__init__(message)
        self.table = table
