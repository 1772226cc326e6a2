"""How far the declared writers of a source partition have got, as they report it themselves.

A source partition's mark otherwise comes from what the worker read: the last record's time less
one, and idle only after a quiet grace (``streams.planner_shell``) that must outlast any writer's
retries. A writer that reports its progress (``schemas.progress.WriterProgress``: nothing at or
before ``ts`` follows after offset ``through``) lets the worker pass ``ts`` as soon as it has
handled the partition through that offset, with no grace.

Only writers the worker is told of (``detect.progress_writers``) count, and only when every one
of them has reported on the partition: the worker cannot see a writer that never reports, so the
declared set must be every writer of the source topics. With none declared nothing here is used.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from schemas.progress import WriterProgress

MAX_WAITING = 1024  # reports kept per writer and partition until the worker has handled their offset


@dataclass(slots=True)
class _Writer:
    """One writer on one partition: the newest time passed, and reports whose offset is not handled yet."""

    passed: int | None = None
    waiting: deque[tuple[int, int]] = field(default_factory=deque)  # (through, ts), offsets ascending

    def note(self, through: int, ts: int) -> None:
        if self.waiting and through < self.waiting[-1][0]:
            return  # an older report than one already kept: a writer's offsets only grow
        if len(self.waiting) >= MAX_WAITING:  # a partition this worker does not own is never settled
            self.waiting.popleft()  # dropping the oldest only passes its time later: never too early
        self.waiting.append((through, ts))

    def settle(self, done: int | None) -> int | None:
        """The newest time of the reports whose offset ``done`` has reached."""
        handled = -1 if done is None else done
        while self.waiting and self.waiting[0][0] <= handled:
            _, ts = self.waiting.popleft()
            self.passed = ts if self.passed is None else max(self.passed, ts)
        return self.passed


@dataclass(slots=True)
class WriterMarks:
    """The declared writers' reports, per (topic, partition)."""

    writers: frozenset[str]
    _by_partition: dict[tuple[str, int], dict[str, _Writer]] = field(default_factory=dict)
    ignored: int = 0  # reports of writers not declared

    def note(self, progress: WriterProgress) -> bool:
        """Keep a report; False (and counted) when its writer is not declared."""
        if progress.writer not in self.writers:
            self.ignored += 1
            return False
        writers = self._by_partition.setdefault((progress.topic, progress.partition), {})
        writers.setdefault(progress.writer, _Writer()).note(progress.through, progress.ts)
        return True

    def passed(self, topic: str, partition: int, done: int | None) -> int | None:
        """No record at or before this time is still to come to the partition, once it is handled
        through offset ``done`` (None: nothing); None while a declared writer has not got there."""
        writers = self._by_partition.get((topic, partition), {})
        if not self.writers or set(writers) != self.writers:
            return None
        times = [w.settle(done) for w in writers.values()]
        if any(t is None for t in times):
            return None
        return min(t for t in times if t is not None)

    def ahead(self, topic: str, partition: int, done: int | None) -> bool:
        """A report of the partition waits for a record after offset ``done``."""
        handled = -1 if done is None else done
        writers = self._by_partition.get((topic, partition), {})
        return any(w.waiting and w.waiting[-1][0] > handled for w in writers.values())

    def waiting(self, topic: str, partition: int, done: int) -> bool:
        """A report of the partition becomes usable once it is handled through ``done``."""
        writers = self._by_partition.get((topic, partition), {})
        return any(w.waiting and w.waiting[0][0] <= done for w in writers.values())
