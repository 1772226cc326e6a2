"""Where generated events go: Kafka (default), a Parquet lake, or nowhere (benchmarks)."""

from producers.sinks.base import MemorySink, NullSink, Sink
from producers.sinks.parquet import ParquetSink

__all__ = ["MemorySink", "NullSink", "ParquetSink", "Sink"]
