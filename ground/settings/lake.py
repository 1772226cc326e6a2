"""Lake settings (section ``[lake]`` / ``FLEETPULSE_LAKE__*``): where the lake is, how the archiver flushes, quality gates."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

TopicFamilyName = Literal["inventory", "samples", "errors", "findings", "actions", "alerts", "dlq"]

ALL_FAMILIES: tuple[TopicFamilyName, ...] = (
    "inventory",
    "samples",
    "errors",
    "findings",
    "actions",
    "alerts",
    "dlq",
)


class QualitySettings(BaseModel):
    """Great-expectations gates run on every archiver batch (``FLEETPULSE_LAKE__QUALITY__*``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = True
    # Event time may run ahead of the archiver's clock by this much (agent clock skew).
    future_tolerance_s: float = Field(300.0, ge=0)
    # Error and sample tables must name hosts present in the inventory table.
    check_known_hosts: bool = True


class LakeSettings(BaseModel):
    """The Delta lake and its archiver.

    ``path`` is a local folder or a URI delta-rs knows (``s3://bucket/lake``, ``file:///data/lake``). A flush happens at whichever of records / bytes / seconds comes first.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str = "lake"
    families: tuple[TopicFamilyName, ...] = ALL_FAMILIES
    group_id: str = "fleetpulse-archiver"
    start_from: Literal["earliest", "latest"] = "earliest"
    flush_records: int = Field(100_000, ge=1)
    flush_bytes: int = Field(64 * 1024 * 1024, ge=1)
    flush_seconds: float = Field(30.0, gt=0)
    poll_timeout_ms: int = Field(500, ge=1)
    max_poll_records: int = Field(5_000, ge=1)
    topic_wait_s: float = Field(30.0, ge=0)
    compression: Literal["zstd", "snappy", "gzip", "lz4", "none"] = "zstd"
    row_group_size: int = Field(128 * 1024, ge=1)
    # A date partition is "closed" (compactable) once it is MORE than this many days before today (UTC):
    # with 1, today and yesterday stay open and the day before yesterday is the newest closed one.
    compact_after_days: int = Field(1, ge=0)
    # ``fleetpulse lake vacuum`` deletes files that no table version of the last this-many hours reads.
    vacuum_retention_hours: int = Field(168, ge=0)
    # delta-rs storage options for an object-store lake (endpoint, region, credentials; ``AWS_*`` variables also work).
    storage_options: dict[str, str] = Field(default_factory=dict)
    quality: QualitySettings = QualitySettings()
    # `fleetpulse archive` serves Prometheus metrics on this port (0: off; --metrics-port overrides; the demo
    # picks a free one for 0).
    metrics_port: int = Field(0, ge=0, le=65535)
    # At each start the archiver reads back the ids of source-stamped rows (samples, errors, inventory) whose event
    # time is within this many seconds of their table's newest, so a resend straddling a restart is stored once.
    # A resend keeps its ts: the simulator's comes within 60 s of sim time (late_max_delay_s), an agent's within its
    # retry of a spooled batch (seconds; longer only for a spool backlog after a broker outage). 0: off.
    resend_window_s: float = Field(600.0, ge=0)
    # Archivers sharing the work: ``member`` (0-based) of ``members`` archives partition p of every topic where
    # p % members == member. Each member needs its own value; together they must cover 0 .. members - 1.
    members: int = Field(1, ge=1)
    member: int = Field(0, ge=0)

    @model_validator(mode="after")
    def _member_in_range(self) -> LakeSettings:
        if self.member >= self.members:
            raise ValueError(
                f"lake.member {self.member} is not one of 0 .. {self.members - 1} (lake.members)"
            )
        return self
