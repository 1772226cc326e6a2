"""A producer's event-time progress, reported per partition it writes (``schemas.progress``).

A detect worker holds a finding back until every source partition has passed its time. Without
word from the writers, a partition that went quiet counts as passed only after a grace
(``detect.plan_quiet_s``) that must outlast any writer's retries. A writer that sends in
event-time order knows better: once its records up to ``ts`` are acknowledged, nothing at or
before ``ts`` follows from it. ``ProgressReporter`` says so on the progress topic, for every
partition of the topics it writes, with the offset of its last acknowledged record there; a
worker that declares this writer (``detect.progress_writers``) then needs no grace for it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from producers.errors import DeliveryError
from schemas.progress import WriterProgress, encode_progress

FLUSH_TIMEOUT_S = 60.0


class ProgressReporter:
    """Reports ``writer``'s progress on ``topics`` through a kafka-python ``producer`` (shared with the data).

    Call ``sent`` with the future of every data record, and ``report(ts)`` once every record at or
    before ``ts`` has been sent and none will follow. Reported times never go back.
    """

    def __init__(self, producer: Any, writer: str, topics: Iterable[str], progress_topic: str) -> None:
        self.producer = producer
        self.writer = writer
        self.topics = tuple(topics)
        self.progress_topic = progress_topic
        self.through: dict[tuple[str, int], int] = {}  # last acknowledged offset per partition
        self.reported: int | None = None
        self._pending: list[Any] = []

    def sent(self, future: Any) -> None:
        self._pending.append(future)

    def report(self, ts: int) -> list[WriterProgress]:
        """Wait for every record sent so far, then say that nothing at or before ``ts`` follows.

        Raises ``DeliveryError`` when a record was not acknowledged: a writer whose record is lost
        must not promise it was sent.
        """
        self.producer.flush(FLUSH_TIMEOUT_S)
        pending, self._pending = self._pending, []
        for future in pending:
            try:
                meta = future.get(timeout=FLUSH_TIMEOUT_S)
            except Exception as exc:  # the producer's own error: it names the broker's refusal
                raise DeliveryError(1, len(pending), repr(exc), topics=list(self.topics)) from exc
            key = (meta.topic, meta.partition)
            self.through[key] = max(self.through.get(key, -1), meta.offset)
        ts = ts if self.reported is None else max(ts, self.reported)
        self.reported = ts
        marks = [
            WriterProgress(self.writer, topic, p, self.through.get((topic, p), -1), ts)
            for topic in self.topics
            for p in sorted(self.producer.partitions_for(topic) or ())
        ]
        for mark in marks:
            self.producer.send(self.progress_topic, key=self.writer.encode(), value=encode_progress(mark))
        self.producer.flush(FLUSH_TIMEOUT_S)
        return marks
