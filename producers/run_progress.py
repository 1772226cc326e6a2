"""The simulator's progress reports: how far its run has got, per errors partition, once acknowledged.

After a tick is written, every event still to come is after the tick's time, except the late
ones the run holds back (``LateDelivery``: about 0.5 % of events, up to a minute). So a partition
is promised the tick's time, or just before the earliest late event it still has coming
(``promises``), never a blanket tick less the longest delay. The reports go on the progress topic
(``producers.writer_progress``) once the tick's records are acknowledged: live, the run waits for
that (at most ``WAIT_S``) before it waits for the next tick; fast-forward, it never waits, and a
tick's promise goes out at a later tick once its records are acknowledged. By default the run
claims to be the only writer of the errors topic (``simulator.writer_progress = "sole"``: true
when it writes topics of its own, as the demo, the benchmarks and the quickstart do), so a worker
with no writers declared may trust its reports (``streams.core.planning.writers``); with
``"report"`` it claims nothing and a worker must list it (``detect.progress_writers``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import TYPE_CHECKING, TypeVar

from kafka.errors import KafkaError

from producers.sinks.base import Sink
from producers.sinks.kafka import KafkaSink
from producers.writer_progress import ProgressReporter

if TYPE_CHECKING:
    from ground.settings import Settings
    from producers.batches import EventBatch

log = logging.getLogger(__name__)
K = TypeVar("K", bound=Hashable)
# how long a report waits for the tick's acknowledgements; longer (a broker away) and it is left to a later
# tick, so the run rides out an outage on the sink's buffer as it did before it reported
WAIT_S = 1.0


def held_times(batches: Iterable[EventBatch], where: Callable[[str, bytes], K | None]) -> dict[K, int]:
    """The earliest event time per partition (``where`` an event goes; None: not reported on) in ``batches``."""
    out: dict[K, int] = {}
    for batch in batches:
        for event_type, key, ts in zip(
            batch.event_types(), batch.keys(), batch.event_times.tolist(), strict=True
        ):
            part = where(event_type, key)
            if part is not None and (part not in out or ts < out[part]):
                out[part] = ts
    return out


def promises(tick_ts: int, partitions: Iterable[K], held: Mapping[K, int]) -> dict[K, int]:
    """What each partition may be promised after a tick: nothing at or before it follows."""
    return {p: min(tick_ts, held[p] - 1) if p in held else tick_ts for p in partitions}


def writer_name(run_id: str) -> str:
    """A run's name as a writer: each run its own, so a run that starts over old times is a new writer."""
    return f"simulator-{run_id}"


def run_reports(settings: Settings, sink: Sink, run_id: str, *, live: bool) -> RunReports | None:
    """The run's reporter when it writes to Kafka and reports are on (``simulator.writer_progress``)."""
    if not isinstance(sink, KafkaSink) or settings.simulator.writer_progress == "off":
        return None
    return RunReports(settings, sink, run_id, live=live)


class RunReports:
    """Reports a run's progress through its Kafka sink: after each live tick, or every ``every_s`` fast-forward."""

    def __init__(
        self,
        settings: Settings,
        sink: KafkaSink,
        run_id: str,
        *,
        live: bool,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        sim = settings.simulator
        writer = writer_name(run_id)
        topics = [settings.topics.errors.name]
        self.sink = sink
        self.reporter = ProgressReporter(
            sink.producer,
            writer,
            topics,
            settings.topics.progress.name,
            writers=(writer,) if sim.writer_progress == "sole" else (),
        )
        sink.watch(topics, self.reporter.sent)
        self.live = live
        self.every_s = 0.0 if live else sim.progress_every_s
        self.clock = clock
        self._last = float("-inf")

    def tick(self, tick_ts: int, held: Iterable[EventBatch]) -> bool:
        """The tick at ``tick_ts`` is written and ``held`` is what is still to come before it; whether reported
        (not when one went out less than ``every_s`` ago, nor when the tick's records are not acknowledged
        within ``WAIT_S`` live, or yet fast-forward)."""
        if self.clock() - self._last < self.every_s:
            return False
        self._last = self.clock()
        try:
            now = held_times(held, self.sink.where)
            if self.live:  # out before the run waits for the next tick: the ack's wait is in that idle time
                return bool(self.reporter.report(tick_ts, now, wait_s=WAIT_S))
            return bool(
                self.reporter.promise(tick_ts, now)
            )  # no stall: out once acknowledged, at a later tick
        except KafkaError as exc:  # the progress topic refused (no grant, say): the run goes on unreported
            self._off(exc)
            return False

    def finish(self) -> None:
        """The run is over (or stopped, its held events never to be sent): nothing more follows from it."""
        if self.every_s != float("inf"):
            try:
                self.reporter.finish()
            except KafkaError as exc:
                self._off(exc)

    def _off(self, exc: KafkaError) -> None:
        log.warning("progress reports off for this run: %s: %s", type(exc).__name__, exc)
        self.every_s = float("inf")
