"""Faust's Kafka transport with a short fetch wait, so a planner message never waits on another fetch.

aiokafka keeps one fetch request in flight per broker, for the partitions that have nothing
buffered. Faust asks it to wait up to 1.5 s for data (hard-coded). A partition whose records were
still buffered when that request left is not in it: its next record (a progress mark releasing a
held finding, a finding) waits until the request returns, up to 1.5 s when the other partitions
stay quiet. Measured on ``bench/bench_detect.py``: the sources' idle marks were on the planner
topic 0.3 s after the error record and the action came 0.6 to 1 s later. With a 100 ms wait (the
samples stage's own) a caught-up worker sends about ten empty fetches a second.
"""

from __future__ import annotations

from typing import Any

import aiokafka
from faust.transport.drivers.aiokafka import AIOKafkaConsumerThread, Consumer, Transport

FETCH_MAX_WAIT_MS = 100


class ShortWaitConsumerThread(AIOKafkaConsumerThread):
    def _create_worker_consumer(self, transport: Any) -> aiokafka.AIOKafkaConsumer:
        consumer = super()._create_worker_consumer(transport)
        # read when the consumer starts (its Fetcher is made then); Faust passes no other value
        consumer._fetch_max_wait_ms = FETCH_MAX_WAIT_MS
        return consumer


class ShortWaitConsumer(Consumer):
    def _new_consumer_thread(self) -> AIOKafkaConsumerThread:
        return ShortWaitConsumerThread(self, loop=self.loop, beacon=self.beacon)


class ShortWaitTransport(Transport):
    """``kafka://`` as Faust's aiokafka driver, whose worker consumer waits ``FETCH_MAX_WAIT_MS`` at most."""

    Consumer = ShortWaitConsumer


def short_fetch_waits(app: Any) -> None:
    """Give a Faust app, before it starts, the transport above."""
    app.transport = ShortWaitTransport(app.conf.broker_consumer, app)
