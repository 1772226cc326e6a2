"""Errors of the analytics jobs; each says which job, table or input is at fault.

JobError
├── UnknownJobError        the job name is not one of JOBS
├── MissingTableError      the lake has no files for a table a job needs
└── InsufficientDataError  too few events to estimate something (e.g. a fit with no failures)
"""

from __future__ import annotations

from ground.errors import FleetpulseError


class JobError(FleetpulseError):
    """Base of every error raised by ``analytics.jobs``."""


class UnknownJobError(JobError):
    """A job name that is not registered."""

    def __init__(self, name: str, known: tuple[str, ...]) -> None:
        super().__init__(f"unknown analytics job {name!r}; choose one of: {', '.join(known)}")
        self.name = name


class MissingTableError(JobError):
    """The lake holds no Parquet files for a table."""

    def __init__(self, lake: str, table: str, job: str | None = None) -> None:
        who = f"job {job!r} needs " if job else ""
        super().__init__(
            f"{who}table {table!r} but {lake}/{table}/ has no Parquet files "
            "(run the simulator with --sink parquet or the archiver first)"
        )
        self.lake, self.table, self.job = lake, table, job


class InsufficientDataError(JobError):
    """Not enough data for an estimate; carries what was missing."""

    def __init__(self, what: str, detail: str = "") -> None:
        super().__init__(f"not enough data for {what}" + (f": {detail}" if detail else ""))
        self.what = what
