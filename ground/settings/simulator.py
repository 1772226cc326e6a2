"""Simulator settings (section ``[simulator]`` / ``FLEETPULSE_SIMULATOR__*``).

Fleet shape and failure rates live in fleet presets (``producers/presets/*.toml``); this
section holds run defaults and producer tuning.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Compression = Literal["auto", "lz4", "zstd", "gzip", "snappy", "none"]


class ProducerTuning(BaseModel):
    """kafka-python producer knobs: throughput (batching) and bounded memory (backpressure)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    compression: Compression = Field("auto", description="auto: zstd, else lz4, else gzip")
    linger_ms: int = Field(20, ge=0)
    batch_size: int = Field(256 * 1024, ge=1024)
    max_buffered_bytes: int = Field(
        64 * 1024 * 1024,
        ge=1024 * 1024,
        description="unacknowledged bytes before the sink blocks (kafka-python 3 has no buffer_memory)",
    )
    max_block_ms: int = Field(600_000, ge=1000, description="how long the sink may block on a full buffer")
    delivery_timeout_ms: int = Field(600_000, ge=1000, description="long enough to ride out a broker restart")
    request_timeout_ms: int = Field(30_000, ge=1000)
    max_request_size: int = Field(4 * 1024 * 1024, ge=1024)


class SimulatorSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    preset: str = "small"
    seed: int = 7
    start: str = Field("2025-01-01T00:00:00Z", description="event-time start of fast-forward runs (UTC)")
    live_interval_s: int = Field(10, ge=1, description="HostSampled interval in live mode")
    fast_forward_interval_s: int = Field(
        21_600, ge=10, description="HostSampled interval in fast-forward mode (samples aggregate this window)"
    )
    # transport noise, on by default so the detectors are scored on what real agents deliver
    late_fraction: float = Field(0.005, ge=0.0, le=1.0, description="share of events delivered late")
    late_max_delay_s: float = Field(60.0, ge=0.0, description="bound of the delivery delay, sim seconds")
    dropout_fraction: float = Field(0.002, ge=0.0, le=1.0, description="share of HostSampled lost")
    duplicate_fraction: float = Field(0.001, ge=0.0, le=1.0, description="share of events sent twice")
    parquet_batch_rows: int = Field(200_000, ge=1, description="rows per lake table and date per commit")
    writer_progress: Literal["sole", "report", "off"] = Field(
        "sole",
        description="Kafka sink: report the run's progress on the errors topic (schemas.progress) once its "
        "records are acknowledged. sole: and claim to be that topic's only writer, so a detect worker with no "
        "progress_writers trusts the reports (true when the run writes topics of its own); report: no claim "
        "(workers must list the run in detect.progress_writers); off: no reports",
    )
    progress_every_s: float = Field(
        0.5, ge=0.0, description="fast-forward: at most one progress report this often (live: every tick)"
    )
    producer: ProducerTuning = ProducerTuning()
