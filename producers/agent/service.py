"""The two ways to run the agent: ``serve`` (spool + Kafka, until stopped) and ``once`` (one round, no Kafka)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ground.settings.agent import AgentSettings
from producers.agent.agent import Record
from producers.agent.build import build_agent
from producers.agent.collector import Problems
from producers.agent.metrics import AgentCollector
from producers.agent.sender import AckingSink, Sender
from producers.agent.spool import Entry, Spool
from producers.sinks.kafka import KafkaSink
from schemas import Codec, kafka_key
from schemas.errors import EncodeError

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

    from ground.settings import Settings

log = logging.getLogger(__name__)
SPOOL_FILE = "agent.db"


def kafka_sink(settings: Settings, host_id: str) -> AckingSink:
    """The simulator's Kafka sink (idempotent, keyed by host id), tuned to give up fast while the broker is away."""

    tuning = settings.simulator.producer.model_copy(
        update={"max_block_ms": 10_000, "delivery_timeout_ms": 120_000, "linger_ms": 50}
    )
    tuned = settings.model_copy(
        update={"simulator": settings.simulator.model_copy(update={"producer": tuning})}
    )
    return KafkaSink(tuned, client_id=f"{settings.kafka.client_id_prefix}-agent-{host_id}")


def once(settings: AgentSettings, *, nvml: ModuleType | None = None, gap_s: float = 1.0) -> list[Record]:
    """One round of events for a person checking a host: polled twice ``gap_s`` apart so rates are real."""
    settings = settings.model_copy(
        update={"step_time": settings.step_time.model_copy(update={"enabled": False})}
    )
    out: list[Record] = []
    agent = build_agent(settings, lambda records, state: out.extend(records), {}, nvml=nvml)
    try:
        agent.round(force=True)
        out[:] = [r for r in out if r["event_type"] != "HostSampled"]  # the first sample has no deltas yet
        time.sleep(gap_s)
        agent.round(force=True)
    finally:
        agent.close()
    return out


def serve(
    settings: Settings,
    stop: Callable[[], bool],
    *,
    sink_factory: Callable[[], AckingSink] | None = None,
    nvml: ModuleType | None = None,
    codec: Codec | None = None,
    registry: CollectorRegistry | None = None,
) -> dict[str, Any]:
    """Run until ``stop()``: rounds into the spool, a sender thread from the spool to Kafka; a summary.

    With a ``registry``, the agent's metrics (``producers.agent.metrics``) are collected on it.
    """
    a = settings.agent
    codec = codec or Codec()
    spool = Spool(a.state_dir / SPOOL_FILE, a.spool.max_bytes)
    problems = Problems()
    sender: Sender | None = None

    def commit(records: list[Record], state: dict[str, Any]) -> None:
        entries = []
        for r in records:
            try:
                value = codec.encode(r)
            except EncodeError as exc:
                problems.add("agent", "unencodable_event", r["event_type"], str(exc))
                continue
            entries.append(
                Entry(
                    r["event_type"] != "HostSampled",
                    r["event_type"],
                    kafka_key(r["event_type"], r["host_id"]),
                    value,
                )
            )
        spool.commit(entries, state)
        if sender is not None:
            sender.wake.set()

    agent = build_agent(a, commit, spool.state(), nvml=nvml, problems=problems)
    sender = Sender(
        spool,
        sink_factory or (lambda: kafka_sink(settings, agent.host_id)),
        problems,
        batch=a.spool.send_batch,
        flush_timeout_s=a.spool.flush_timeout_s,
    )
    collector = AgentCollector(spool, sender, problems, lambda: agent.emitted)
    if registry is not None:
        registry.register(collector)
    sender.start()
    log.info("agent %s: %d collectors, spool %s", agent.host_id, len(agent.collectors), spool.path)
    try:
        agent.run(stop)
    finally:
        agent.close()
        sender.close()
        summary = {
            "emitted": agent.emitted,
            "delivered": sender.delivered,
            "spooled": len(spool),
            "dropped": spool.dropped(),
            "problems": problems.as_dict(),
        }
        if registry is not None:
            registry.unregister(collector)  # a scrape must not read a closed spool
        spool.close()
    return summary
