"""Topic names and their layout (partitions, retention, compaction).

Creation lives in ``ground.kafka.admin``; this module is only the declaration, so every
part imports topic names from one place.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

CleanupPolicy = Literal["delete", "compact"]

DAY_MS = 24 * 3600 * 1000
DLQ_MAX_MESSAGE_BYTES = 2 * 1024 * 1024


class TopicSpec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    partitions: int = Field(ge=1)
    cleanup_policy: CleanupPolicy = "delete"
    retention_ms: int = Field(7 * DAY_MS, ge=-1)
    replication_factor: int = Field(-1, ge=-1, description="-1: the cluster's default.replication.factor")
    segment_ms: int | None = Field(
        None,
        ge=1,
        description="roll segments this often (lets a busy compacted topic compact); None: broker default",
    )

    max_message_bytes: int | None = Field(
        None, ge=1024, description="largest record the topic takes (max.message.bytes); None: broker default"
    )

    def configs(self) -> dict[str, str]:
        cfg: dict[str, str] = {"cleanup.policy": self.cleanup_policy}
        if self.cleanup_policy == "delete":
            cfg["retention.ms"] = str(self.retention_ms)
        if self.segment_ms is not None:
            cfg["segment.ms"] = str(self.segment_ms)
        if self.max_message_bytes is not None:
            cfg["max.message.bytes"] = str(self.max_message_bytes)
        return cfg


class TopicSettings(BaseModel):
    """Every fleetpulse topic. Inventory is compacted; samples short-lived; errors/findings/actions kept long."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    inventory: TopicSpec = TopicSpec(name="fleet.inventory", partitions=6, cleanup_policy="compact")
    samples: TopicSpec = TopicSpec(name="fleet.samples", partitions=6, retention_ms=3 * DAY_MS)
    errors: TopicSpec = TopicSpec(name="fleet.errors", partitions=6, retention_ms=365 * DAY_MS)
    findings: TopicSpec = TopicSpec(name="fleet.findings", partitions=3, retention_ms=365 * DAY_MS)
    actions: TopicSpec = TopicSpec(name="fleet.actions", partitions=3, retention_ms=-1)
    alerts: TopicSpec = TopicSpec(name="fleet.alerts", partitions=1, retention_ms=90 * DAY_MS)
    # A dead letter carries the whole original record plus its reason: room for a record as large
    # as any other topic accepts (the broker's default, 1 MiB) and then some.
    dlq: TopicSpec = TopicSpec(
        name="fleet.dlq", partitions=1, retention_ms=30 * DAY_MS, max_message_bytes=DLQ_MAX_MESSAGE_BYTES
    )
    # producers' event-time progress (``schemas.progress``): read live from its end, never archived
    progress: TopicSpec = TopicSpec(name="fleet.progress", partitions=1, retention_ms=DAY_MS)

    prefix: str = Field("", description="Prepended to every topic name, e.g. 'demo-1.' for an isolated run")

    @model_validator(mode="before")
    @classmethod
    def _merge_partial_overrides(cls, data: Any) -> Any:
        """Let ``FLEETPULSE_TOPICS__SAMPLES__PARTITIONS=12`` change one key and keep the other defaults."""
        if not isinstance(data, dict):
            return data
        merged = dict(data)
        for key, value in data.items():
            default = cls.model_fields[key].default if key in cls.model_fields else None
            if isinstance(value, dict) and isinstance(default, TopicSpec):
                merged[key] = {**default.model_dump(), **value}
        return merged

    @model_validator(mode="after")
    def _apply_prefix(self) -> TopicSettings:
        if self.prefix:
            for key in _TOPIC_KEYS:
                spec: TopicSpec = getattr(self, key)
                if not spec.name.startswith(self.prefix):
                    object.__setattr__(self, key, spec.model_copy(update={"name": self.prefix + spec.name}))
        return self

    def all(self) -> list[TopicSpec]:
        return [
            self.inventory,
            self.samples,
            self.errors,
            self.findings,
            self.actions,
            self.alerts,
            self.dlq,
            self.progress,
        ]


_TOPIC_KEYS = ("inventory", "samples", "errors", "findings", "actions", "alerts", "dlq", "progress")
