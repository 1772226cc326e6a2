"""The worker's fold of ``fleet.actions``: the one fleet state its agents and its HTTP API read.

It starts from the newest snapshot, folds the log's records (``streams.tailer.LogTailer`` calls
``apply``), starts over when the log is another one, and is snapshotted only while no planner
event has actions applied here that the broker has not acknowledged (``in_flight``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from schemas.bounds import check_not_ahead
from streams.core.fleet.lifecycle import FleetState, apply_logged
from streams.core.fleet.snapshot import FleetSnapshots
from streams.core.log_mark import LogMark


class FleetFold:
    """The folded fleet state (``fleet``, a new object after a rewind: read it through this fold)."""

    def __init__(self, snapshots: FleetSnapshots, clock: Callable[[], float]) -> None:
        self.snapshots = snapshots
        self.clock = clock
        self.unacked = 0  # planner events whose actions are applied here but not yet acknowledged
        snapshots.busy = lambda: self.unacked > 0
        self.fleet, self.start = snapshots.load()  # start: where the log tailer resumes

    def apply(self, record: dict[str, Any]) -> None:
        """Fold one logged record; any writer the ACLs let on the log may send a year-3000 record:
        the tailer skips it (``BoundsError``)."""
        check_not_ahead(record["ts"], int(self.clock() * 1000), what=f"{record['event_type']} ts")
        apply_logged(self.fleet, record)

    def rewind(self) -> None:
        """The snapshot is of another log: fold this one from its start."""
        self.fleet = FleetState()
        self.snapshots.rewound()

    def progress(self, positions: dict[int, LogMark]) -> None:
        self.snapshots.progress(self.fleet, positions)

    @contextmanager
    def in_flight(self) -> Iterator[None]:
        """While a planner event's actions are applied but not acknowledged: no snapshot. Not
        released when the block raises: a failed publish ends the worker (``Outputs.publish``), and
        no snapshot may keep actions the log never got."""
        self.unacked += 1
        yield
        self.unacked -= 1
