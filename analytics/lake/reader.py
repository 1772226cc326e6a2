"""The reader API for analytics jobs: a lake table as a Polars LazyFrame of published files only.

Tables are hive-partitioned by ``date`` (a ``pl.Date`` column). A missing table scans as an empty
frame with the table's schema, so jobs need no special case for a young lake. Works on the
archiver's lakes and on the simulator's Parquet sink (same layout, no manifest).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.dataset as ds

from analytics.lake.batch import REJECTED_SCHEMA
from analytics.lake.catalog import known_hosts as catalog_known_hosts
from analytics.lake.catalog import published_files
from analytics.lake.fs import LakeFS
from analytics.lake.layout import REJECTED_DIR, TopicPartition, parse_archive_name
from analytics.lake.manifest import read_frontier
from analytics.lake.quarantine import QuarantineEntry, quarantine_entries
from analytics.tables import TABLES, event_type_of, table_of
from schemas.arrow import table_schema

HIVE_SCHEMA = {"date": pl.Date}


def polars_schema(table: str) -> pl.Schema:
    """The Polars schema of a lake table (without the ``date`` partition column)."""
    empty = table_schema(event_type_of(table)).empty_table()
    return pl.from_arrow(empty).schema  # type: ignore[union-attr]


class Lake:
    """A lake on a filesystem: what tables exist, their published files, quarantine and rejects."""

    def __init__(self, path: str | Path | LakeFS) -> None:
        self.fs = path if isinstance(path, LakeFS) else LakeFS(path)

    def __repr__(self) -> str:
        return f"Lake({self.fs.root!r})"

    def tables(self) -> list[str]:
        """Tables with at least one published file."""
        return [t for t in sorted(TABLES) if published_files(self.fs, t)]

    def files(self, table: str) -> list[str]:
        """Published files of a table, relative to the lake root."""
        return published_files(self.fs, table_of(table))

    def schema(self, table: str) -> pl.Schema:
        schema = polars_schema(table)
        return pl.Schema([*schema.items(), ("date", pl.Date())])

    def scan(self, table: str) -> pl.LazyFrame:
        """A table as a LazyFrame over its published files; empty with the right schema if none."""
        table = table_of(table)
        files = self.files(table)
        if not files:
            return pl.LazyFrame(schema=self.schema(table))
        if not self.fs.is_local:
            return self._scan_dataset(table, files)
        return pl.scan_parquet(
            [self.fs.uri(rel) for rel in files],
            hive_partitioning=True,
            hive_schema=HIVE_SCHEMA,
            schema=polars_schema(table),
            missing_columns="insert",
            extra_columns="ignore",
        )

    def _scan_dataset(self, table: str, files: list[str]) -> pl.LazyFrame:
        """Remote filesystems go through the same pyarrow filesystem the archiver writes with."""
        schema = table_schema(event_type_of(table)).append(pa.field("date", pa.date32()))
        dataset = ds.dataset(
            [self.fs.full(rel) for rel in files],
            schema=schema,
            format="parquet",
            filesystem=self.fs.fs,
            partitioning=ds.partitioning(pa.schema([("date", pa.date32())]), flavor="hive"),
            partition_base_dir=self.fs.full(table),
        )
        return pl.scan_pyarrow_dataset(dataset)

    def frontier(self) -> dict[TopicPartition, int]:
        """Next offset to archive per Kafka partition."""
        return read_frontier(self.fs)

    def quarantine(self) -> list[QuarantineEntry]:
        return quarantine_entries(self.fs)

    def rejected(self) -> pl.LazyFrame:
        """Undecodable records (original bytes, reason, source offsets) of committed batches."""

        frontier = self.frontier()
        rels = []
        for rel in self.fs.files(REJECTED_DIR):
            name = parse_archive_name(rel)
            if name is not None and not (name.tp in frontier and name.last >= frontier[name.tp]):
                rels.append(rel)
        if not rels:
            return pl.LazyFrame(schema=pl.from_arrow(REJECTED_SCHEMA.empty_table()).schema)  # type: ignore[union-attr]
        tables = [self.fs.read_parquet(rel) for rel in rels]
        return pl.from_arrow(pa.concat_tables(tables)).lazy()  # type: ignore[union-attr]

    def known_hosts(self) -> set[str]:
        """host_id of every committed inventory record, published or quarantined (as the archiver's gate)."""
        return catalog_known_hosts(self.fs)


def scan(lake_path: str | Path | LakeFS | Lake, table: str) -> pl.LazyFrame:
    """``Lake(lake_path).scan(table)``: a table (``host_sampled`` or ``HostSampled``) as a LazyFrame."""
    lake = lake_path if isinstance(lake_path, Lake) else Lake(lake_path)
    return lake.scan(table)
