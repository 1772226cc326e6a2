"""A storm of identical Kafka-client errors becomes one line per period with a count; other lines pass at once."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from ground.repeated_log_lines import SOURCES, RateLimitRepeats, install


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def uninstall() -> Iterator[None]:
    yield
    for name in SOURCES:
        logger = logging.getLogger(name)
        for f in [f for f in logger.filters if isinstance(f, RateLimitRepeats)]:
            logger.removeFilter(f)


@pytest.fixture
def client_log() -> logging.Logger:
    return logging.getLogger("aiokafka")  # where aiokafka.client logs its connection errors


def test_an_outage_of_reconnect_errors_logs_one_line_per_period_with_the_count(
    client_log: logging.Logger, caplog: pytest.LogCaptureFixture
) -> None:
    limit = install()
    clock = Clock()
    limit.clock = clock
    caplog.set_level(logging.INFO)
    for i in range(3000):  # 10 a second for 300 s, alternating nodes
        clock.now = i / 10
        client_log.error("Unable connect to node with id %s: %s", i % 3, OSError("Connect call failed"))
    client_log.info("Metadata for cluster refreshed")  # the recovery
    lines = [r.getMessage() for r in caplog.records if r.name == "aiokafka"]
    assert len(lines) == 300 / 30 + 1  # at 0, 30, … 270 s, and the recovery
    assert lines[0] == "Unable connect to node with id 0: Connect call failed"
    assert "(repeated 299 times in the last 30 s)" in lines[1]
    assert lines[-1] == "Metadata for cluster refreshed"
    assert limit.suppressed == 3000 - 10


def test_a_different_error_is_logged_at_once(
    client_log: logging.Logger, caplog: pytest.LogCaptureFixture
) -> None:
    install()
    caplog.set_level(logging.INFO)
    for _ in range(50):
        client_log.error("Unable connect to node with id %s: %s", 1, "refused")
    client_log.error("Unable to update metadata from %s", [1])
    client_log.warning("Unable connect to node with id %s: %s", 1, "refused")  # another level: another shape
    lines = [r.getMessage() for r in caplog.records if r.name == "aiokafka"]
    assert lines == [
        "Unable connect to node with id 1: refused",
        "Unable to update metadata from [1]",
        "Unable connect to node with id 1: refused",
    ]


def test_preformatted_messages_differing_in_numbers_are_one_shape() -> None:
    limit = RateLimitRepeats()
    records = [
        logging.LogRecord(
            "kafka.conn", logging.ERROR, __file__, 1, f"<BrokerConnection node_id={i}>: refused", None, None
        )
        for i in range(5)
    ]
    assert [limit.filter(r) for r in records] == [True, False, False, False, False]


def test_every_fleetpulse_command_installs_it() -> None:
    from typer.testing import CliRunner

    from fleetpulse.cli import app

    CliRunner().invoke(app, ["topics", "--help"])
    assert any(isinstance(f, RateLimitRepeats) for f in logging.getLogger("aiokafka").filters)
