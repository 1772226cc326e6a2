"""Exception hierarchy of ``fleetpulse import``.

SimulatorError (producers.errors)
└── HistoryImportError      anything the importer raises on purpose
    ├── MappingFileError    the mapping file is missing or invalid (says which key to fix)
    └── SourceFileError     the incident file cannot be read as a whole (format, wrong columns)

A single bad row is not an error: it is counted and reported with its row number.
"""

from __future__ import annotations

from pathlib import Path

from producers.errors import SimulatorError


class HistoryImportError(SimulatorError):
    """Base of every error the importer raises on purpose."""


class MappingFileError(HistoryImportError):
    def __init__(self, message: str, path: Path | None = None) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path


class SourceFileError(HistoryImportError):
    def __init__(self, message: str, path: Path) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
