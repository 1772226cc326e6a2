"""The sink a run names: Kafka (its topics created first unless told not to), the Delta lake, or nowhere."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ground.delta import DeltaTables
from ground.kafka.admin import create_topics
from producers.sinks.base import NullSink, Sink
from producers.sinks.kafka import KafkaSink
from producers.sinks.parquet import ParquetSink

if TYPE_CHECKING:
    from ground.settings import Settings

SinkName = Literal["kafka", "parquet", "null"]


def make_sink(settings: Settings, name: SinkName, run_id: str, *, out: Path | None, topics: bool) -> Sink:
    """``out``: the lake of a parquet sink (else ``settings.lake.path``); ``topics``: create Kafka's first."""
    if name == "null":
        return NullSink()
    if name == "parquet":
        lake = DeltaTables(
            out or settings.lake.path,
            compression=settings.lake.compression,
            row_group_size=settings.lake.row_group_size,
        )
        return ParquetSink(lake, run_id=run_id, batch_rows=settings.simulator.parquet_batch_rows)
    if topics:
        create_topics(settings)
    return KafkaSink(settings)
