"""Snapshots of the folded fleet state with the ``fleet.actions`` position they cover.

Every worker folds the whole actions log at start; at a million operations a day that start would
grow with history. A worker writes its folded state (pruned, ``streams.core.fleet.retention``) and the
log position it covers to its data folder, and a restart folds only the records after it. Records
the worker applied before they reached the log (its own actions) may lie past that position: folding
them again is a no-op, as for any re-delivery. A snapshot that cannot be read, or belongs to another
topic or format, is ignored (the worker folds the log from the start, as without one). The state is
encoded on the caller's thread (the event loop: nothing changes it meanwhile) and written and fsynced
on a thread of its own, so a snapshot of tens of MB does not stall the worker's agents.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import msgspec

from streams.core.fleet.lifecycle import FleetState
from streams.core.fleet.retention import forget
from streams.core.log_mark import LogMark

log = logging.getLogger(__name__)

SNAPSHOT_VERSION = 1
SNAPSHOT_NAME = "fleet-state.snapshot"


class FleetSnapshot(msgspec.Struct, frozen=True):
    topic: str
    marks: dict[int, LogMark]  # partition -> where the fold stands
    state: FleetState
    v: int = SNAPSHOT_VERSION


def write_snapshot(path: Path, snapshot: FleetSnapshot) -> int:
    """Write atomically (a crash leaves the old snapshot or the new one, never half of one); bytes written."""
    return write_atomically(path, msgspec.msgpack.encode(snapshot))


def write_atomically(path: Path, data: bytes) -> int:
    tmp = path.with_name(f".{path.name}.tmp")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return len(data)


def read_snapshot(path: Path, topic: str) -> FleetSnapshot | None:
    """The snapshot of ``topic`` at ``path``, or None (absent, unreadable, other topic or format)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("fleet state snapshot %s unreadable (%s): folding %s from the start", path, exc, topic)
        return None
    try:
        snapshot = msgspec.msgpack.decode(data, type=FleetSnapshot)
    except msgspec.DecodeError as exc:
        log.warning("fleet state snapshot %s is not valid (%s): folding %s from the start", path, exc, topic)
        return None
    if snapshot.v != SNAPSHOT_VERSION or snapshot.topic != topic:
        log.warning(
            "fleet state snapshot %s is of %s v%d: folding %s from the start",
            path,
            snapshot.topic,
            snapshot.v,
            topic,
        )
        return None
    return snapshot


class FleetSnapshots:
    """One worker's snapshots: loaded once at start, written every ``every`` records folded.

    ``busy`` (the caller's) says when the state holds actions the broker has not acknowledged yet:
    a snapshot then could outlive a crash that loses them, and the finding re-delivered after it
    would find its id already applied. No snapshot is taken while it returns True, nor while the last
    one is still being written.
    """

    def __init__(
        self,
        path: Path,
        topic: str,
        *,
        every: int,
        keep_ids: int,
        ended_horizon_ms: int,
        busy: Callable[[], bool] = lambda: False,
    ) -> None:
        self.path = path
        self.topic = topic
        self.every = every
        self.keep_ids = keep_ids
        self.ended_horizon_ms = ended_horizon_ms
        self.busy = busy
        self._count_at_last = 0
        self.written = 0
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fleet-snapshot")
        self._pending: Future[None] | None = None

    def load(self) -> tuple[FleetState, dict[int, LogMark]]:
        """The saved state and where in the log it stands, or an empty state and no marks."""
        snapshot = read_snapshot(self.path, self.topic)
        if snapshot is None:
            return FleetState(), {}
        self._count_at_last = snapshot.state.count
        log.info(
            "fleet state from %s: %d records folded, resuming %s at %s",
            self.path,
            snapshot.state.count,
            self.topic,
            snapshot.marks,
        )
        return snapshot.state, dict(snapshot.marks)

    def rewound(self) -> None:
        """The loaded state was dropped (its log was not this one): count records from zero again."""
        self._count_at_last = 0

    def progress(self, state: FleetState, marks: dict[int, LogMark]) -> bool:
        """Prune and snapshot ``state`` at ``marks`` when due; True when one was taken (written in the background)."""
        if state.count - self._count_at_last < self.every or self.busy():
            return False
        if self._pending is not None and not self._pending.done():
            return False
        forget(state, self.keep_ids, self.ended_horizon_ms)
        data = msgspec.msgpack.encode(FleetSnapshot(self.topic, marks, state))
        self._count_at_last = state.count
        self._pending = self._writer.submit(self._write, data)
        return True

    def _write(self, data: bytes) -> None:
        try:
            write_atomically(self.path, data)
        except OSError as exc:  # a full or read-only disk costs a longer next start, not the worker
            log.warning("cannot write the fleet state snapshot %s: %s", self.path, exc)
            return
        self.written += 1

    def flush(self) -> None:
        """Wait until the snapshot being written, if any, is on disk."""
        if self._pending is not None:
            self._pending.result()
