"""Where generated events go: Kafka (``sinks.kafka``, default), the Delta lake (``sinks.parquet``), or nowhere.

The package imports neither sink, so a part that sends to Kafka (the host agent) does not load pyarrow.
"""

from producers.sinks.base import MemorySink, NullSink, Sink

__all__ = ["MemorySink", "NullSink", "Sink"]
