"""Drains the spool to Kafka in order on its own thread, deleting rows only once the broker acknowledged them.

A broker outage leaves the rows in the spool (bounded on disk, not in memory); the sink is rebuilt
and the same rows, with the same event ids, are sent again when the broker is back.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from producers.agent.collector import Problems
from producers.agent.spool import Spool, Spooled

log = logging.getLogger(__name__)
SOURCE = "sender"


class AckingSink(Protocol):
    """What the sender needs of ``producers.sinks.kafka.KafkaSink``."""

    sent: int
    acked: int
    failed: int

    def write(self, batch: Any) -> None: ...

    def flush(self, timeout_s: float | None = None) -> None: ...

    def close(self) -> None: ...


class SpooledBatch:
    """Already-encoded spool rows, offered through the sink's batch interface."""

    def __init__(self, rows: list[Spooled]) -> None:
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def event_types(self) -> list[str]:
        return [r.event_type for r in self.rows]

    def keys(self) -> list[bytes]:
        return [r.key for r in self.rows]

    def encode(self, codec: Any) -> list[bytes]:
        return [r.value for r in self.rows]


class Sender:
    def __init__(
        self,
        spool: Spool,
        sink_factory: Callable[[], AckingSink],
        problems: Problems,
        *,
        batch: int = 500,
        flush_timeout_s: float = 5.0,
        retry_s: float = 1.0,
    ) -> None:
        self.spool, self.sink_factory, self.problems = spool, sink_factory, problems
        self.batch, self.flush_timeout_s, self.retry_s = batch, flush_timeout_s, retry_s
        self.sink: AckingSink | None = None
        self.delivered = 0
        self.last_delivered_s: float | None = None  # wall-clock time of the last acknowledged batch
        self.wake = threading.Event()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, name="agent-sender", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def run(self) -> None:
        while not self.stop.is_set():
            if not self.send_once():
                self.wake.wait(0.5)
                self.wake.clear()

    def send_once(self) -> bool:
        """Send one batch from the spool; True when something was delivered."""
        rows = self.spool.peek(self.batch)
        if not rows:
            return False
        try:
            if self.sink is None:
                self.sink = self.sink_factory()
            sink = self.sink
            acked, failed = sink.acked, sink.failed
            sink.write(SpooledBatch(rows))
            while sink.acked + sink.failed - acked - failed < len(rows):
                if self.stop.is_set():
                    return False
                try:
                    sink.flush(self.flush_timeout_s)
                except Exception as exc:  # kafka-python raises KafkaTimeoutError while the broker is away
                    self.problems.add(SOURCE, "broker_unreachable", "", f"{type(exc).__name__}: {exc}")
            if sink.failed > failed:
                raise RuntimeError(f"{sink.failed - failed} of {len(rows)} records not acknowledged")
        except Exception as exc:  # any sink failure: keep the rows, rebuild the sink, try again
            self.problems.add(SOURCE, "send_failed", "", f"{type(exc).__name__}: {exc}")
            self._drop_sink()
            self.stop.wait(self.retry_s)
            return False
        self.spool.ack(rows[-1].id)
        self.delivered += len(rows)
        self.last_delivered_s = time.time()
        return True

    def _drop_sink(self) -> None:
        if self.sink is not None:
            try:
                self.sink.close()
            except Exception as exc:  # DeliveryError of the failed batch: already counted
                log.debug("closing the failed sink: %s", exc)
            self.sink = None

    def close(self, drain_s: float = 10.0) -> None:
        """Try to deliver what is spooled for up to ``drain_s``, then stop; the rest stays on disk."""
        deadline = time.monotonic() + drain_s
        while self.thread.is_alive() and len(self.spool) and time.monotonic() < deadline:
            self.wake.set()
            time.sleep(0.05)
        self.stop.set()
        self.wake.set()
        if self.thread.is_alive():
            self.thread.join(timeout=drain_s)
        self._drop_sink()
