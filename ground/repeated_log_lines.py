"""Repeated warnings and errors of the Kafka clients: the first logged, the rest counted into one line per period.

While a broker is away, aiokafka logs the same connection error several times a second for every
connection (711,058 lines, 72 MB from one worker in a 5-minute outage), which buries everything
else. A record whose shape — logger, level, message template — was logged less than ``period_s``
ago is counted, not logged; the first one after the period is logged with "(repeated K times in
the last N s)". Any other message (a recovery, another error) has another shape and is logged at
once, so the start of a storm and its end stay visible.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import Counter
from collections.abc import Callable

from ground.quiet_logs import SOURCES as DEMOTED_SOURCES
from ground.quiet_logs import attach

SOURCES = (
    *DEMOTED_SOURCES,
    "aiokafka",  # aiokafka.client logs here, not under its module's name
    "aiokafka.conn",
    "aiokafka.producer.sender",
    "aiokafka.producer.producer",
    "aiokafka.admin.client",
    "kafka.conn",
    "kafka.client",
    "kafka.cluster",
    "kafka.coordinator",
    "kafka.coordinator.consumer",
    "kafka.consumer.fetcher",
    "kafka.producer.sender",
    "kafka.producer.kafka",
)
PERIOD_S = 30.0
MAX_SHAPES = 1024  # shapes remembered at once; the oldest are forgotten beyond it
_DIGITS = re.compile(r"\d+")

Shape = tuple[str, int, str]


def shape_of(record: logging.LogRecord) -> Shape:
    """Logger, level and template: the format string if the record has arguments, else the text with digits masked."""
    template = str(record.msg)
    return record.name, record.levelno, template if record.args else _DIGITS.sub("#", template)


class RateLimitRepeats(logging.Filter):
    """Lets one record per shape through per ``period_s`` (at ``min_level`` and above), with the count held back."""

    def __init__(
        self,
        period_s: float = PERIOD_S,
        min_level: int = logging.WARNING,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.period_s = period_s
        self.min_level = min_level
        self.clock = clock
        self._shown: dict[Shape, float] = {}  # when a record of the shape was last let through
        self._held: Counter[Shape] = Counter()  # records of the shape held back since then
        self._lock = threading.Lock()
        self.suppressed = 0  # records held back in all (tests, metrics)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < self.min_level:
            return True
        shape = shape_of(record)
        now = self.clock()
        with self._lock:
            shown = self._shown.get(shape)
            if shown is not None and now - shown < self.period_s:
                self._held[shape] += 1
                self.suppressed += 1
                return False
            held = self._held.pop(shape, 0)
            self._shown.pop(shape, None)
            self._shown[shape] = now  # re-inserted: the dict stays ordered by last shown
            while len(self._shown) > MAX_SHAPES:
                oldest = next(iter(self._shown))
                del self._shown[oldest]
                self._held.pop(oldest, None)
        if held and shown is not None:
            record.msg = f"{record.msg} (repeated {held} times in the last {now - shown:.0f} s)"
        return True


def install(sources: tuple[str, ...] = SOURCES, period_s: float = PERIOD_S) -> RateLimitRepeats:
    """One filter on every source logger, after any filter already there (idempotent: an earlier one is replaced)."""
    limit = RateLimitRepeats(period_s)
    attach(limit, sources)
    return limit
