"""Known-harmless library warnings demoted where they are logged, so that every WARNING or ERROR
of a clean run is a real problem: Faust's producer backpressure while catching up, its commit timer
outrunning its interval under load, aiokafka retrying while a fresh broker elects a group coordinator,
and Faust's leader topic missing from the first metadata fetch on a fresh broker.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass

# Logger filters apply only to records created on that very logger (not its children), and the
# worker's handlers are rebuilt when Faust sets logging up, so each source logger gets the filter.
SOURCES = (
    "faust.transport.producer",
    "faust.transport.consumer",
    "faust.transport.drivers.aiokafka",
    "mode.timers",
    "aiokafka.consumer.group_coordinator",
    "aiokafka.consumer.consumer",
    "aiokafka.consumer.fetcher",
    "aiokafka.client",
    "aiokafka.cluster",
    "faust.assignor.partition_assignor",
)


@dataclass(frozen=True, slots=True)
class Demotion:
    """Records of ``logger`` ("*": any source) at level ``at`` whose message contains ``text`` are
    logged at ``level`` instead; the same text at another level is left alone."""

    name: str
    logger: str
    text: str
    at: int
    level: int


HARMLESS: tuple[Demotion, ...] = (
    # the conductor waits for the producer to drain: backpressure doing its job during catch-up
    Demotion(
        "producer_backpressure",
        "faust.transport.producer",
        "producer buffer full",
        logging.WARNING,
        logging.DEBUG,
    ),
    # a commit that takes longer than the commit interval under load; the next one catches up
    Demotion(
        "commit_timer_overlap", "mode.timers", "Timer commit is overlapping", logging.WARNING, logging.DEBUG
    ),
    # a fresh broker has no coordinator for the group yet; the client retries until it has one
    Demotion("coordinator_not_ready", "*", "CoordinatorNotAvailable", logging.ERROR, logging.INFO),
    # Faust's leader-election topic is created a moment after the first metadata fetch asks for it
    Demotion(
        "leader_topic_not_yet",
        "aiokafka.cluster",
        "__assignor-__leader not found",
        logging.ERROR,
        logging.INFO,
    ),
    Demotion(
        "leader_topic_not_yet",
        "faust.assignor.partition_assignor",
        "__assignor-__leader",
        logging.WARNING,
        logging.INFO,
    ),
)


class DemoteHarmless(logging.Filter):
    """Lowers the level of the known-harmless records and drops them when that level is off."""

    def __init__(self, demotions: tuple[Demotion, ...] = HARMLESS) -> None:
        super().__init__()
        self.demotions = demotions
        self.counts: Counter[str] = Counter()  # demoted records per demotion, for metrics and tests

    def filter(self, record: logging.LogRecord) -> bool:
        for d in self.demotions:
            if record.levelno != d.at or d.logger not in ("*", record.name):
                continue
            if d.text in record.getMessage():
                self.counts[d.name] += 1
                record.levelno, record.levelname = d.level, logging.getLevelName(d.level)
                return logging.getLogger(record.name).isEnabledFor(d.level)
        return True


def attach(log_filter: logging.Filter, sources: tuple[str, ...]) -> None:
    """Put ``log_filter`` on every source logger, replacing a filter of its type put there before."""
    for name in sources:
        logger = logging.getLogger(name)
        for old in [f for f in logger.filters if type(f) is type(log_filter)]:
            logger.removeFilter(old)
        logger.addFilter(log_filter)


def install(sources: tuple[str, ...] = SOURCES) -> DemoteHarmless:
    """Attach one filter to every source logger (idempotent: an earlier one is replaced)."""
    demote = DemoteHarmless()
    attach(demote, sources)
    return demote
