"""DLQSurge counts dead letters by when they reached Kafka, not by when the worker read them.

A worker catching up on a backlog reads hours of records in seconds; with its wall clock, dead
letters spread over those hours looked like a surge.
"""

from __future__ import annotations

from typing import Any

from streams.alerts import DlqSurge
from streams.app import DetectApp
from streams.testing import START_TS
from tests.streams.test_agents import Sent, detect, run  # noqa: F401 (detect: the fixture)

SURGE = 3
WINDOW_MS = 60_000


def surges(app: DetectApp, sent: Sent, arrivals_ms: list[int]) -> list[int]:
    """Feed one undecodable record per arrival time (all read at once); the DLQSurge alerts' times."""
    app.outputs.dlq_surge = DlqSurge(SURGE, WINDOW_MS)
    alerts: list[dict[str, Any]] = []

    async def send_alert(record: dict[str, Any], **kwargs: Any) -> None:
        alerts.append(record)

    app.outputs._send_alert = send_alert  # type: ignore[method-assign]

    async def feed() -> None:
        async with app.agents["errors"].test_context() as agent:
            for i, at_ms in enumerate(arrivals_ms):
                await agent.put(b"\x00\x00\x00\x00\x63garbage", key=f"h{i}".encode(), timestamp=at_ms / 1000)

    run(app, feed())
    return [a["ts"] for a in alerts if a["payload"]["alertname"] == "DLQSurge"]


def test_a_backlog_of_dead_letters_spread_over_hours_is_no_surge(
    detect: tuple[DetectApp, Sent],  # noqa: F811
) -> None:
    app, sent = detect
    spread = [START_TS + i * 10 * WINDOW_MS for i in range(SURGE * 2)]
    assert surges(app, sent, spread) == []
    assert len(sent.decoded(app.settings.topics.dlq.name)) == len(spread)


def test_dead_letters_that_arrived_within_a_window_are_one_surge_whatever_order_they_are_read(
    detect: tuple[DetectApp, Sent],  # noqa: F811
) -> None:
    app, sent = detect
    burst = [START_TS + 3_000, START_TS + 1_000, START_TS + 10 * WINDOW_MS, START_TS + 2_000]
    assert surges(app, sent, burst) == [START_TS + 2_000]
