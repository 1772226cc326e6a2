"""The Delta lake: archiver (Kafka → Delta tables, exactly once), upkeep, quarantine, and the reader API.

Jobs read with ``scan(lake_path, table)`` or ``Lake(path)``; the report generator lists
``Lake(path).quarantine()``. Layout: see ``analytics.lake.layout`` and docs/LAKE.md.
"""

from analytics.lake.archiver import Archiver, ArchiveStats
from analytics.lake.layout import TopicPartition
from analytics.lake.maintenance import CompactionResult, compact, vacuum
from analytics.lake.quarantine import QuarantineEntry, quarantine_entries
from analytics.lake.reader import Lake, polars_schema, scan
from analytics.tables import TABLES

__all__ = [
    "TABLES",
    "ArchiveStats",
    "Archiver",
    "CompactionResult",
    "Lake",
    "QuarantineEntry",
    "TopicPartition",
    "compact",
    "polars_schema",
    "quarantine_entries",
    "scan",
    "vacuum",
]
