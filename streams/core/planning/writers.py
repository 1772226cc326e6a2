"""How far the writers of a source partition have got, as they report it themselves.

A source partition's mark otherwise comes from what the worker read: the last record's time less
one, and idle only after a quiet grace (``streams.planner_shell``) that must outlast any writer's
retries. A writer that reports its progress (``schemas.progress.WriterProgress``: nothing at or
before ``ts`` follows after offset ``through``) lets the worker pass ``ts`` as soon as it has
handled the partition through that offset, with no grace.

That is sound only if the worker knows the partition's complete set of writers: it cannot see a
writer that never reports, and a record of one would come after its time was passed. The set is
either declared to the worker (``detect.progress_writers``: every writer of the errors topic) or,
with none declared, claimed by the writers themselves: each report may name the partition's every
writer (``WriterProgress.writers``), and the claim counts only while every writer reporting on the
partition names the same set and every member of it has reported. A writer outside a claimed set
that reports, or two writers naming different sets, send the partition back to the quiet rule; a
writer that reports ``done`` is forgotten once its records are handled. So the guarantee is the
claimant's: a writer may claim only what it knows (the simulator claims to be the sole writer of
the topics it writes unless told it shares them, ``simulator.writer_progress``). A silent writer
left out of a claim is invisible, and its records are decided late, as an undeclared writer's are
or one that outlasts the grace. Reports that make no claim count only for declared writers.
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
    claim: frozenset[str] = frozenset()  # the set of writers its newest report names
    gone: bool = False  # its ``done`` report is handled: nothing more follows from it
    waiting: deque[tuple[int, int, bool]] = field(
        default_factory=deque
    )  # (through, ts, done), offsets ascending

    def note(self, through: int, ts: int, done: bool) -> None:
        if self.waiting and through < self.waiting[-1][0]:
            return  # an older report than one already kept: a writer's offsets only grow
        if len(self.waiting) >= MAX_WAITING:  # a partition this worker does not own is never settled
            self.waiting.popleft()  # dropping the oldest only passes its time later: never too early
        self.waiting.append((through, ts, done))

    def settle(self, done: int | None) -> int | None:
        """The newest time of the reports whose offset ``done`` has reached."""
        handled = -1 if done is None else done
        while self.waiting and self.waiting[0][0] <= handled:
            _, ts, finished = self.waiting.popleft()
            if finished:  # gone; a later report (a new run under the same name) starts it afresh
                self.passed, self.gone = None, True
                continue
            self.passed = ts if self.passed is None or self.gone else max(self.passed, ts)
            self.gone = False
        return self.passed


@dataclass(slots=True)
class WriterMarks:
    """The writers' reports, per (topic, partition): of the declared writers, or of any that claim a set."""

    writers: frozenset[str]  # declared (``detect.progress_writers``); empty: the writers' own claims count
    claims: bool = True  # with none declared, whether claims count (False: nothing passes, as before reports)
    _by_partition: dict[tuple[str, int], dict[str, _Writer]] = field(default_factory=dict)
    ignored: int = 0  # reports of writers not declared, or of any writer when claims do not count

    def note(self, progress: WriterProgress) -> bool:
        """Keep a report; False (and counted) when it cannot count here."""
        if self.writers and progress.writer not in self.writers or not (self.writers or self.claims):
            self.ignored += 1
            return False
        writers = self._by_partition.setdefault((progress.topic, progress.partition), {})
        writer = writers.setdefault(progress.writer, _Writer())
        writer.note(progress.through, progress.ts, progress.done)
        if not progress.done:
            writer.claim = frozenset(progress.writers)
        return True

    def passed(self, topic: str, partition: int, done: int | None) -> int | None:
        """No record at or before this time is still to come to the partition, once it is handled
        through offset ``done`` (None: nothing); None while its complete set of writers is not known
        or one of them has not got there."""
        writers = self._by_partition.get((topic, partition), {})
        times = {name: w.settle(done) for name, w in writers.items()}
        for name in [name for name, w in writers.items() if w.gone and not w.waiting]:
            del writers[name], times[name]
        complete = self.writers or _claimed([w.claim for w in writers.values()])
        if not complete or set(writers) != complete or any(t is None for t in times.values()):
            return None
        return min(t for t in times.values() if t is not None)

    def ahead(self, topic: str, partition: int, done: int | None) -> bool:
        """A report of the partition waits for a record after offset ``done``."""
        handled = -1 if done is None else done
        writers = self._by_partition.get((topic, partition), {})
        return any(w.waiting and w.waiting[-1][0] > handled for w in writers.values())

    def waiting(self, topic: str, partition: int, done: int) -> bool:
        """A report of the partition becomes usable once it is handled through ``done``."""
        writers = self._by_partition.get((topic, partition), {})
        return any(w.waiting and w.waiting[0][0] <= done for w in writers.values())


def _claimed(claims: list[frozenset[str]]) -> frozenset[str]:
    """The set every writer on the partition names; empty when one names none or they differ."""
    if not claims or any(c != claims[0] for c in claims):
        return frozenset()
    return claims[0]
