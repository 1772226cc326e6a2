"""Settings of one fault scenario: its own topic prefix, and per-variant outputs and consumer groups.

A scenario's input topics (inventory, samples, errors) are shared by its variants; each
variant (the clean reference, the faulty run) gets its own findings/actions/alerts/dlq
topics and its own detect app id, so both can process the same input side by side.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ground.kafka.topics import TopicSpec
from streams.topology import consumer_groups

if TYPE_CHECKING:
    from ground.settings import Settings

INPUTS = ("inventory", "samples", "errors")
OUTPUTS = ("findings", "actions", "alerts", "dlq")


def safe(text: str) -> str:
    """A Kafka-safe name fragment."""
    return re.sub(r"[^a-zA-Z0-9._-]+", "-", text).strip("-.") or "x"


def sandbox(base: Settings, bootstrap: str, prefix: str, *, partitions: int = 3) -> Settings:
    """``base`` pointed at ``bootstrap`` with every topic under ``prefix`` (inputs with ``partitions``)."""
    updates: dict[str, TopicSpec] = {}
    for key in (*INPUTS, *OUTPUTS):
        spec: TopicSpec = getattr(base.topics, key)
        bare = spec.name[len(base.topics.prefix) :] if spec.name.startswith(base.topics.prefix) else spec.name
        parts = partitions if key in ("samples", "errors", "findings", "actions") else spec.partitions
        updates[key] = spec.model_copy(update={"name": prefix + bare, "partitions": parts})
    topics = base.topics.model_copy(update={**updates, "prefix": prefix})
    kafka = base.kafka.model_copy(update={"bootstrap_servers": bootstrap})
    detect = base.detect.model_copy(
        update={
            "app_id": f"{prefix}detect",
            "internal_partitions": partitions,
            "commit_interval_s": 0.5,
            "session_timeout_s": 6.0,
        }
    )
    return base.model_copy(update={"kafka": kafka, "topics": topics, "detect": detect})


def variant(settings: Settings, tag: str) -> Settings:
    """Same input topics; outputs ``<prefix><tag>.<name>`` and app id ``<prefix><tag>-detect``."""
    prefix = settings.topics.prefix
    tag = safe(tag)
    updates = {}
    for key in OUTPUTS:
        spec: TopicSpec = getattr(settings.topics, key)
        bare = spec.name[len(prefix) :] if spec.name.startswith(prefix) else spec.name
        updates[key] = spec.model_copy(update={"name": f"{prefix}{tag}.{bare}"})
    topics = settings.topics.model_copy(update=updates)
    detect = settings.detect.model_copy(update={"app_id": f"{prefix}{tag}-detect"})
    return settings.model_copy(update={"topics": topics, "detect": detect})


def consumed_topics(settings: Settings) -> dict[str, list[str]]:
    """Every topic a detect worker of these settings commits offsets on, by consumer group."""

    return consumer_groups(settings)
