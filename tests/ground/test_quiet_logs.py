"""Known-harmless library warnings are demoted where they are logged; everything else passes as it was."""

from __future__ import annotations

import logging

import pytest

from ground.quiet_logs import DemoteHarmless, install
from ground.repeated_log_lines import SOURCES, RateLimitRepeats


@pytest.fixture
def captured(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO)
    for name in SOURCES:  # a command run by an earlier test limits repeats on these loggers
        logger = logging.getLogger(name)
        logger.filters = [f for f in logger.filters if not isinstance(f, RateLimitRepeats)]
    return caplog


def test_harmless_warnings_are_demoted_and_real_ones_kept(captured: pytest.LogCaptureFixture) -> None:
    demote = install()
    logging.getLogger("faust.transport.producer").warning("producer buffer full size %s", 1200)
    logging.getLogger("mode.timers").warning(
        "Timer %s is overlapping (interval=%r runtime=%r)", "commit", 2.8, 3.1
    )
    logging.getLogger("aiokafka.consumer.group_coordinator").error(
        "Group Coordinator Request failed: %s", "[Error 15] GroupCoordinatorNotAvailableError"
    )
    logging.getLogger("aiokafka.consumer.group_coordinator").error("Heartbeat failed: %r", "boom")
    logging.getLogger("mode.timers").warning(
        "Timer %s is overlapping (interval=%r runtime=%r)", "livelock", 1.0, 9.0
    )
    logging.getLogger("faust.transport.producer").error("producer buffer full and the broker is gone")
    logging.getLogger("aiokafka.cluster").error(
        "Topic %s not found in cluster metadata", "d-detect-__assignor-__leader"
    )
    logging.getLogger("faust.assignor.partition_assignor").warning(
        "Ignoring missing topic: %r", "d-detect-__assignor-__leader"
    )
    logging.getLogger("aiokafka.cluster").error("Topic %s not found in cluster metadata", "fleet.samples")
    levels = [(r.name, r.levelname, r.getMessage()[:30]) for r in captured.records]
    assert [lv for _, lv, _ in levels] == ["INFO", "ERROR", "WARNING", "ERROR", "INFO", "INFO", "ERROR"]
    assert "GroupCoordinatorNotAvailable" in captured.records[0].getMessage()
    assert demote.counts == {
        "producer_backpressure": 1,
        "commit_timer_overlap": 1,
        "coordinator_not_ready": 1,
        "leader_topic_not_yet": 2,
    }


def test_installing_twice_keeps_one_filter() -> None:
    install()
    install()
    ours = [f for f in logging.getLogger("mode.timers").filters if isinstance(f, DemoteHarmless)]
    assert len(ours) == 1  # other filters (the secret redaction) may sit beside it


def test_demoted_records_show_when_their_level_is_on(captured: pytest.LogCaptureFixture) -> None:
    install()
    captured.set_level(logging.DEBUG, logger="faust.transport.producer")
    logging.getLogger("faust.transport.producer").warning("producer buffer full size %s", 7)
    assert [r.levelname for r in captured.records] == ["DEBUG"]
