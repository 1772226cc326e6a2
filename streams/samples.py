"""The host-window stage on ``fleet.samples``: a plain aiokafka group consumer beside the Faust app.

Samples are nearly all of a worker's input, and Faust's per-event stream, ack and table
machinery cost ~5x what decoding them does (docs/benchmarks/detect.md). This stage reads
them in batches instead, in a consumer group of its own, and hands each batch to the
partitions it owns (``streams.sample_partitions``: host windows, the summaries sent to the
cluster stage, checkpoints, idle partitions). Here: the clients, the fetch loop, the rebalance
listener, and starting again from the checkpoints when a run fails.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener, TopicPartition

from streams.sample_partitions import FETCH_MAX_WAIT_MS, SamplePartitions

log = logging.getLogger(__name__)

FINAL_CHECKPOINT_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 5.0
RESTART_AFTER_S = 1.0  # after a failure: as the clients' reconnect backoff (kafka.reconnect_backoff_max_ms)


class SamplesStage:
    """Consume ``fleet.samples`` in a consumer group of its own; see the module docstring."""

    def __init__(
        self,
        partitions: SamplePartitions,
        *,
        group_id: str,
        checkpoint_s: float,
        group_config: Mapping[str, Any] | None = None,
    ) -> None:
        self.partitions = partitions
        self.topic = partitions.topic
        self.summaries_topic = partitions.summaries_topic
        self.client_config = partitions.client_config
        self.group_id = group_id
        self.checkpoint_s = checkpoint_s
        self.group_config = dict(group_config or {})  # session timeout, heartbeats: as the Faust agents'
        self._stopping = False
        self.restarts = 0  # times run() failed and was started again (/health)
        self.started = asyncio.Event()

    # -- observation ----------------------------------------------------------------------------

    def assignment(self) -> list[str]:
        return [f"{self.topic}[{p}]" for p in sorted(self.partitions.parts)]

    def idle_partitions(self) -> list[str]:
        """Owned partitions declared idle (caught up, nothing new for the idle timeout)."""
        return [f"{self.topic}[{p}]" for p in self.partitions.idle.declared()]

    def lag(self) -> list[tuple[str, int, int]]:
        consumer = self.partitions.consumer
        if consumer is None:
            return []
        out = []
        for p, state in sorted(self.partitions.parts.items()):
            high = consumer.highwater(TopicPartition(self.topic, p))
            if high is not None:
                out.append((self.topic, p, max(0, high - state.next_offset)))
        return out

    # -- lifecycle ------------------------------------------------------------------------------

    def stop(self) -> None:
        self._stopping = True

    async def run_until_stopped(self, retry_s: float = RESTART_AFTER_S) -> None:
        """``run()``, started again from the last checkpoints whenever it fails.

        A broker gone longer than a request timeout fails a summary send, a checkpoint or a
        commit, and ``run()`` ends with that error; the worker's other agents recover by
        themselves, so this stage must too (no person restarts a worker that says it is healthy).
        Its partitions are forgotten first, so each resumes from its checkpoint as after a crash.
        """
        while not self._stopping:
            try:
                await self.run()
                return
            except asyncio.CancelledError as exc:
                task = asyncio.current_task()
                if self._stopping or task is None or task.cancelling():
                    raise  # the worker is stopping
                failure: BaseException = exc  # a cancellation from inside the Kafka client, not ours
            except Exception as exc:  # noqa: BLE001 - any failure: start again, as a restart would
                failure = exc
            self.restarts += 1
            log.warning(
                "samples stage failed (%s: %s); starting again from its checkpoints in %g s",
                type(failure).__name__,
                failure,
                retry_s,
            )
            self.partitions.forget_all()
            await asyncio.sleep(retry_s)

    async def run(self) -> None:
        """Consume until ``stop()`` or cancellation; checkpoint what is owned on the way out."""
        consumer = AIOKafkaConsumer(
            group_id=self.group_id,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            fetch_max_wait_ms=FETCH_MAX_WAIT_MS,
            max_partition_fetch_bytes=4 * 1024 * 1024,
            **self.group_config,
            **self.client_config,
        )
        producer = AIOKafkaProducer(acks="all", linger_ms=5, **self.client_config)
        try:  # a start that fails (broker gone) stops both clients too: run() is started again
            await producer.start()
            await consumer.start()
            parts = self.partitions
            parts.consumer, parts.producer = consumer, producer
            consumer.subscribe([self.topic], listener=_Listener(parts))
            self.started.set()
            last_checkpoint = time.monotonic()
            while not self._stopping:
                batches = await consumer.getmany(timeout_ms=200, max_records=2000)
                async with parts.lock:
                    for tp, messages in batches.items():
                        await parts.fold_batch(tp.partition, messages)
                    await parts.declare_idle(consumer)
                    if time.monotonic() - last_checkpoint >= self.checkpoint_s:
                        await parts.checkpoint(sorted(parts.dirty))
                        last_checkpoint = time.monotonic()
        finally:
            parts = self.partitions
            try:
                if parts.producer is not None:
                    async with parts.lock:
                        await asyncio.wait_for(
                            parts.checkpoint(sorted(parts.dirty)), FINAL_CHECKPOINT_TIMEOUT_S
                        )
            except Exception as exc:  # the broker is gone: the last checkpoint stands
                log.warning("samples stage: no final checkpoint (%s)", exc)
            parts.consumer = parts.producer = None
            for client in (consumer, producer):
                try:  # with the broker gone a stop can wait for request timeouts: do not hold up shutdown
                    await asyncio.wait_for(client.stop(), STOP_TIMEOUT_S)
                except Exception as exc:
                    log.warning("samples stage: %s did not stop cleanly: %s", type(client).__name__, exc)


class _Listener(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, partitions: SamplePartitions) -> None:
        self.partitions = partitions

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        await self.partitions.on_revoked(revoked)

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        await self.partitions.on_assigned(assigned)
