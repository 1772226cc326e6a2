"""Detector and webhook settings (sections ``[detect]`` and ``[webhooks]``)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

PlanOrder = Literal["event_time", "arrival"]  # how the planner orders findings (the backtest follows it)


class DetectSettings(BaseModel):
    """One detect worker; run several processes (same ``app_id``) to share the partitions."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    app_id: str = "fleetpulse-detect"
    policy_file: Path | None = Field(None, description="detection policy TOML; None = ground/policy.toml")
    store: Literal["rocksdb", "memory"] = "rocksdb"
    data_dir: Path | None = Field(None, description="local table state; None = <paths.home>/detect/<app_id>")
    web_host: str = "127.0.0.1"
    web_port: int = Field(6066, ge=0, le=65535)
    state_write_buffer_mb: int = Field(
        8,
        ge=1,
        le=1024,
        description="RocksDB write buffer (memtable) per table partition, at most two; Faust's own default "
        "(64 MB, three) took a worker half an hour at 10x meta-48k to fill, growing its memory all along",
    )
    state_block_cache_mb: int = Field(
        16,
        ge=1,
        le=4096,
        description="RocksDB block cache per table partition (Faust's own default: 2 GB each)",
    )
    internal_partitions: int = Field(
        6, ge=1, description="partitions of the cluster-summary and planner topics"
    )
    internal_replication: int = Field(1, ge=1, description="replication factor of Faust's internal topics")
    tick_interval_s: float = Field(1.0, gt=0, description="how often repair completions are checked")
    commit_interval_s: float = Field(1.0, gt=0)
    session_timeout_s: float = Field(
        10.0, ge=6.0, description="a killed worker's partitions move to the others after this long"
    )
    heartbeat_interval_s: float = Field(1.0, gt=0)
    checkpoint_every: int = Field(
        10,
        ge=1,
        description="write hot per-cluster state to its table every N updates (and on window open/close)",
    )
    samples_checkpoint_s: float = Field(
        5.0, gt=0, description="how often the host-window stage checkpoints its state and offsets"
    )
    static_membership: bool = Field(
        True,
        description="join the consumer groups with a group.instance.id, so a restarted worker gets its "
        "partitions back at once instead of after session_timeout_s (a worker gone for good is "
        "replaced after session_timeout_s either way)",
    )
    instance_id: str | None = Field(
        None,
        description="this worker's group.instance.id; None: derived from the host name and data_dir, "
        "which every worker has of its own. Two running workers must never share one",
    )
    shutdown_timeout_s: float = Field(
        10.0,
        gt=0,
        description="after SIGTERM/SIGINT the process is gone within this long: the graceful shutdown "
        "gets 80 % of it, then the worker exits anyway",
    )
    plan_order: PlanOrder = Field(
        "event_time",
        description="event_time: the planner decides findings in event-time order once every finding "
        "source has passed their time, so the same findings give the same actions whatever order they "
        "arrive in (a page waits until the slowest busy source has passed it); arrival: at once, as they come",
    )
    plan_quiet_s: float = Field(
        1.0,
        ge=0,
        description="event_time: a finding source counts as idle (holds no finding back) once it has been "
        "caught up, with nothing new, this long; a finding of another source still in flight gets this long "
        "to arrive, and it is about what a page waits while every source is quiet",
    )
    progress_writers: tuple[str, ...] = Field(
        (),
        description="event_time: every writer of the errors topic, when each reports its own progress on "
        "the progress topic (schemas.progress); an errors partition then passes a time as soon as all of "
        "them have reported past it, with no quiet time. A writer left out is not waited for: list all or "
        "none. Empty: writers that claim the complete set of a partition's writers in their reports are "
        "trusted (progress_claims), else marks come from the records read and plan_quiet_s alone",
    )
    progress_claims: bool = Field(
        True,
        description="event_time, with no progress_writers: an errors partition passes a time on its writers' "
        "reports when they all name the same complete set of writers and each has reported past it (the "
        "simulator claims to be the sole writer of its topics); false: only declared writers count",
    )
    snapshot_every: int = Field(
        100_000,
        ge=1,
        description="records of fleet.actions folded between snapshots of the fleet state in data_dir "
        "(a restart folds only the records after the last one)",
    )
    remember_ids: int = Field(
        1_000_000,
        ge=10_000,
        description="newest action, finding and outage ids kept to make re-deliveries no-ops; a "
        "re-delivery reaches back one commit interval, far fewer records",
    )
    forget_ended_after_s: float = Field(
        30 * 86_400.0, gt=0, description="outages that ended this long before the fleet's clock are forgotten"
    )
    log_level: str = "warning"
    ops_token: SecretStr | None = Field(
        None,
        description="bearer token POST /ops/events requires (ticket systems, node controllers); "
        "unset: the endpoint refuses every request. FLEETPULSE_DETECT__OPS_TOKEN",
    )


class WebhookSettings(BaseModel):
    """Alert webhooks: where to POST, how to sign, how hard to retry (``FLEETPULSE_WEBHOOKS__*``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    urls: list[str] = []
    secret: SecretStr | None = None  # HMAC-SHA256 key; FLEETPULSE_WEBHOOKS__SECRET
    group_id: str = "fleetpulse-webhooks"
    data_dir: Path | None = None  # outbox directory; None: <paths.home>/webhooks
    receiver_name: str = "fleetpulse"
    external_url: str = ""
    alertmanager_urls: list[str] = Field(
        [],
        description="Alertmanagers to push alerts into (their base URL; fleetpulse posts to /api/v2/alerts)",
    )
    alertmanager_alert_ttl_s: float = Field(
        86_400.0, gt=0, description="a firing alert pushed into Alertmanager ends this long after it started"
    )
    console_url: str = Field(
        "", description="the detector's API as people reach it: alerts' generatorURL links to its host pages"
    )
    metrics_port: int = Field(
        0,
        ge=0,
        le=65535,
        description="`fleetpulse dispatch` serves Prometheus metrics on this port (0: off; --metrics-port "
        "overrides; the demo picks a free one for 0)",
    )
    timeout_s: float = Field(10.0, gt=0)
    backoff_base_s: float = Field(1.0, gt=0)
    backoff_max_s: float = Field(300.0, gt=0)
    backoff_jitter: float = Field(0.5, ge=0, le=1)
    max_attempts: int = Field(12, ge=1)
    max_in_flight_per_url: int = Field(4, ge=1)
    outbox_retention_days: float = Field(14.0, gt=0)
    signature_scheme: Literal["standard"] = Field(
        "standard",
        description="standard: Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature over "
        "id.timestamp.body), the only scheme",
    )
    signature_tolerance_s: float = Field(
        300.0, gt=0, le=900, description="max age of a signed request; a finite cap bounds the replay window"
    )
