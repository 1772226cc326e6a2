"""A producer's event-time progress, reported per partition it writes (``schemas.progress``).

A detect worker holds a finding back until every source partition has passed its time. Without
word from the writers, a partition that went quiet counts as passed only after a grace
(``detect.plan_quiet_s``) that must outlast any writer's retries. A writer that sends in
event-time order knows better: once its records up to ``ts`` are acknowledged, nothing at or
before ``ts`` follows from it. ``ProgressReporter`` says so on the progress topic, for every
partition of the topics it writes, with the offset of its last acknowledged record there; a
worker that declares this writer (``detect.progress_writers``) then needs no grace for it. A
writer that knows every writer of the partitions it writes says so in each report (``writers``),
so that a worker declaring none knows the complete set too (``streams.core.planning.writers``);
``finish`` says the writer is done, so that another run under another name can take over.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from typing import Any

from kafka.errors import KafkaTimeoutError

from producers.errors import DeliveryError
from schemas.progress import WriterProgress, encode_progress

FLUSH_TIMEOUT_S = 60.0


class ProgressReporter:
    """Reports ``writer``'s progress on ``topics`` through a kafka-python ``producer`` (shared with the data).

    Call ``sent`` with the future of every data record, and ``report(ts)`` once every record at or
    before ``ts`` has been sent and none will follow. Reported times never go back. ``writers``:
    the complete set of writers of ``topics`` this writer claims, itself included (empty: no claim).
    """

    def __init__(
        self,
        producer: Any,
        writer: str,
        topics: Iterable[str],
        progress_topic: str,
        writers: Iterable[str] = (),
    ) -> None:
        self.producer = producer
        self.writer = writer
        self.topics = tuple(topics)
        self.progress_topic = progress_topic
        self.writers = tuple(sorted(set(writers)))
        self.through: dict[tuple[str, int], int] = {}  # last acknowledged offset per partition
        self.reported: dict[tuple[str, int], int] = {}  # last time reported per partition
        self._pending: list[Any] = []
        self._promises: list[tuple[int, int, dict[tuple[str, int], int]]] = []  # (records before, ts, held)

    def sent(self, future: Any) -> None:
        self._pending.append(future)

    def report(
        self, ts: int, held: Mapping[tuple[str, int], int] | None = None, *, wait_s: float | None = None
    ) -> list[WriterProgress]:
        """Wait for every record sent so far, then say that nothing at or before ``ts`` follows.

        ``held``: per (topic, partition), a time the writer still has a record of to send there;
        that partition is promised only up to just before it. ``wait_s``: report nothing (an empty
        list) unless every record is acknowledged within this long; a later report covers this one.
        Raises ``DeliveryError`` when a record was not acknowledged: a writer whose record is lost
        must not promise it was sent.
        """
        if not self._acknowledged(FLUSH_TIMEOUT_S if wait_s is None else wait_s):
            return []
        return self._promised(ts, held or {})

    def promise(self, ts: int, held: Mapping[tuple[str, int], int] | None = None) -> list[WriterProgress]:
        """``report`` without waiting: the promise goes out once every record sent before it is acknowledged,
        now or at a later call (only the newest promise ready then). Returns what went out."""
        self._promises.append((len(self._pending), ts, dict(held or {})))
        acked = 0
        while acked < len(self._pending) and self._pending[acked].is_done:
            acked += 1
        ready = [p for p in self._promises if p[0] <= acked]
        if not ready:
            return []
        count, ts, held = ready[-1]
        self._promises = [(c - count, t, h) for c, t, h in self._promises if c > count]
        done, self._pending = self._pending[:count], self._pending[count:]
        self._note(done)
        return self._promised(ts, held, flush=False)

    def _promised(
        self, ts: int, held: Mapping[tuple[str, int], int], *, flush: bool = True
    ) -> list[WriterProgress]:
        marks = []
        for key in self._partitions():
            promised = min(ts, held[key] - 1) if key in held else ts
            last = self.reported.get(key)
            self.reported[key] = promised if last is None else max(promised, last)
            marks.append(self._mark(key, self.reported[key]))
        self._send(marks, flush=flush)
        return marks

    def finish(self) -> list[WriterProgress]:
        """Wait for every record sent so far, then say that nothing more at all follows from this writer
        (nothing, when they are not acknowledged in time: a reader then keeps its last report)."""
        if not self._acknowledged(FLUSH_TIMEOUT_S):
            return []
        marks = [self._mark(key, self.reported.get(key, -1), done=True) for key in self._partitions()]
        self._send(marks)
        return marks

    def _mark(self, key: tuple[str, int], ts: int, *, done: bool = False) -> WriterProgress:
        topic, p = key
        return WriterProgress(
            self.writer, topic, p, self.through.get(key, -1), ts, writers=self.writers, done=done
        )

    def _partitions(self) -> list[tuple[str, int]]:
        return [
            (topic, p) for topic in self.topics for p in sorted(self.producer.partitions_for(topic) or ())
        ]

    def _send(self, marks: list[WriterProgress], *, flush: bool = True) -> None:
        for mark in marks:
            self.producer.send(self.progress_topic, key=self.writer.encode(), value=encode_progress(mark))
        if flush:  # out now; without, the producer's linger sends them, and no data record waits for them
            with contextlib.suppress(KafkaTimeoutError):  # a report still on its way is as true when it lands
                self.producer.flush(FLUSH_TIMEOUT_S)

    def _acknowledged(self, wait_s: float) -> bool:
        """Flush, and note the offset of every record sent so far; False when that takes over ``wait_s``
        (the records stay pending), ``DeliveryError`` if one was lost."""
        try:
            self.producer.flush(wait_s)
        except KafkaTimeoutError:
            return False
        pending, self._pending = self._pending, []
        self._promises = []  # every record they waited for is acknowledged: a later report covers them
        self._note(pending)
        return True

    def _note(self, futures: list[Any]) -> None:
        """The offsets of acknowledged records; ``DeliveryError`` if one was lost."""
        for future in futures:
            try:
                meta = future.get(timeout=FLUSH_TIMEOUT_S)
            except Exception as exc:  # the producer's own error: it names the broker's refusal
                raise DeliveryError(1, len(futures), repr(exc), topics=list(self.topics)) from exc
            key = (meta.topic, meta.partition)
            self.through[key] = max(self.through.get(key, -1), meta.offset)
