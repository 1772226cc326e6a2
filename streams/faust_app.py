"""The Faust app of a detect worker, configured in one place from the settings."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import faust

from streams import state_store
from streams.operator_events import MAX_STEP_BYTES

if TYPE_CHECKING:
    from ground.settings import Settings


def faust_app(settings: Settings, data_dir: Path, instance_id: str | None) -> faust.App:
    """At-least-once, raw bytes in and out (the codec is ours), static membership when ``instance_id`` is set."""
    d = settings.detect
    return faust.App(
        d.app_id,
        broker=[f"kafka://{b.strip()}" for b in settings.bootstrap_servers.split(",")],
        broker_credentials=settings.kafka.faust_credentials(),
        store=state_store.URL if d.store == "rocksdb" else "memory://",
        datadir=str(data_dir),
        processing_guarantee="at_least_once",
        autodiscover=False,
        web_enabled=True,
        web_port=d.web_port,
        web_bind=d.web_host,
        web_host=d.web_host,
        web_application_options={"client_max_size": MAX_STEP_BYTES},  # POST /ops/events' cap
        topic_replication_factor=d.internal_replication,
        topic_partitions=d.internal_partitions,
        table_standby_replicas=0,
        consumer_auto_offset_reset="earliest",
        broker_commit_interval=d.commit_interval_s,
        broker_session_timeout=d.session_timeout_s,
        broker_heartbeat_interval=d.heartbeat_interval_s,
        consumer_group_instance_id=instance_id,
        producer_acks=-1,
        producer_linger_ms=5,
        producer_max_request_size=settings.topics.dlq.max_message_bytes or 1_000_000,  # dead letters
        # faust-streaming acks an event whose processing raised (this setting is read nowhere):
        # the agents handle their errors themselves (dead letters, retried catch-up) instead
        stream_ack_exceptions=False,
        key_serializer="raw",
        value_serializer="raw",
    )
