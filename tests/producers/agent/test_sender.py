from __future__ import annotations

from pathlib import Path
from typing import Any

from producers.agent.collector import Problems
from producers.agent.sender import Sender
from producers.agent.spool import Entry, Spool


class FakeSink:
    """Acknowledges what it is sent unless told the broker is down."""

    def __init__(self, log: list[bytes], down: dict[str, bool]) -> None:
        self.log, self.down = log, down
        self.sent = self.acked = self.failed = 0
        self.pending: list[bytes] = []

    def write(self, batch: Any) -> None:
        values = batch.encode(None)
        self.sent += len(values)
        self.pending += values

    def flush(self, timeout_s: float | None = None) -> None:
        if self.down["now"]:
            self.failed += len(self.pending)
        else:
            self.acked += len(self.pending)
            self.log += self.pending
        self.pending = []

    def close(self) -> None:
        return None


def test_rows_leave_the_spool_only_once_acknowledged_and_in_order(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "a.db", 1 << 20)
    spool.commit([Entry(True, "XidRaised", b"h", bytes([i])) for i in range(5)], {})
    delivered: list[bytes] = []
    down = {"now": True}
    problems = Problems()
    sender = Sender(spool, lambda: FakeSink(delivered, down), problems, batch=2, retry_s=0)
    assert not sender.send_once()
    assert len(spool) == 5 and problems.counts[("sender", "send_failed")] == 1
    down["now"] = False
    while sender.send_once():
        pass
    assert delivered == [bytes([i]) for i in range(5)]
    assert len(spool) == 0 and sender.delivered == 5


def test_a_sink_that_cannot_be_built_is_retried(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "a.db", 1 << 20)
    spool.commit([Entry(True, "XidRaised", b"h", b"x")], {})
    attempts: list[int] = []

    def factory() -> FakeSink:
        attempts.append(1)
        if len(attempts) < 3:
            raise ConnectionError("broker down")
        return FakeSink([], {"now": False})

    sender = Sender(spool, factory, Problems(), retry_s=0)
    results = [sender.send_once() for _ in range(3)]
    assert results == [False, False, True] and len(spool) == 0
