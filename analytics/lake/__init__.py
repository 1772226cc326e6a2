"""The Parquet lake: archiver (Kafka → files, exactly once), compaction, quarantine, and the reader API.

Jobs read with ``scan(lake_path, table)`` or ``Lake(path)``; the report generator lists
``quarantine_entries(lake)``. Layout: see ``analytics.lake.layout`` and docs/LAKE.md.
"""

from analytics.lake.archiver import Archiver, ArchiveStats
from analytics.lake.compaction import CompactionResult, compact
from analytics.lake.fs import LakeFS
from analytics.lake.layout import ArchiveName, TopicPartition
from analytics.lake.quarantine import QuarantineEntry, quarantine_entries
from analytics.lake.reader import Lake, polars_schema, scan
from analytics.tables import TABLES

__all__ = [
    "TABLES",
    "ArchiveName",
    "ArchiveStats",
    "Archiver",
    "CompactionResult",
    "Lake",
    "LakeFS",
    "QuarantineEntry",
    "TopicPartition",
    "compact",
    "polars_schema",
    "quarantine_entries",
    "scan",
]
