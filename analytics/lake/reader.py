"""The reader API for analytics jobs: a lake table as a Polars LazyFrame over its Delta table's current version.

Tables carry a ``date`` column (``pl.Date``, the partition). A missing table scans as an empty frame
with the table's schema, so jobs need no special case for a young lake; columns a table was written
without (an older event schema) read as nulls. Other engines read the same tables through the Delta
log (DuckDB's ``delta_scan``, Spark, ``pl.scan_delta``): see docs/LAKE.md.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from analytics.errors import LakeError
from analytics.lake.layout import OFFSETS_TABLE, REJECTED_TABLE, TopicPartition
from analytics.lake.offsets import read_frontier
from analytics.lake.quarantine import QuarantineEntry, quarantine_entries, quarantined
from analytics.lake.records import REJECTED_SCHEMA
from analytics.tables import TABLES, event_type_of, table_of
from ground.delta import DATE, DeltaTables
from schemas.arrow import table_schema

INVENTORY_TABLE = "host_inventoried"


def polars_schema(table: str) -> pl.Schema:
    """The Polars schema of a lake table (without the ``date`` partition column)."""
    empty = table_schema(event_type_of(table)).empty_table()
    return pl.from_arrow(empty).schema  # type: ignore[union-attr]


def conform(frame: pl.LazyFrame, schema: pl.Schema) -> pl.LazyFrame:
    """``frame`` with exactly ``schema``'s columns, in order: missing ones as nulls, extra ones dropped."""
    have = set(frame.collect_schema().names())
    return frame.select(
        [pl.col(c).cast(t) if c in have else pl.lit(None, t).alias(c) for c, t in schema.items()]
    )


class Lake:
    """A lake of Delta tables: what tables exist, their data, quarantine, rejects and the archiver's offsets."""

    def __init__(self, path: str | Path | DeltaTables, storage_options: dict[str, str] | None = None) -> None:
        self.delta = path if isinstance(path, DeltaTables) else DeltaTables(path, storage_options)

    def __repr__(self) -> str:
        return f"Lake({str(self.delta.root)!r})"

    @property
    def root(self) -> str:
        return self.delta.uri()

    def tables(self) -> list[str]:
        """Tables that exist (with or without rows)."""
        return [t for t in sorted(TABLES) if self.delta.exists(t)]

    def files(self, table: str) -> list[str]:
        """The data files of a table's current version (URIs), as other engines would read them."""
        found = self.delta.open(table_of(table))
        return [] if found is None else sorted(found.file_uris())

    def version(self, table: str) -> int | None:
        found = self.delta.open(table_of(table))
        return None if found is None else found.version()

    def schema(self, table: str) -> pl.Schema:
        return pl.Schema([*polars_schema(table).items(), (DATE, pl.Date())])

    def scan(self, table: str) -> pl.LazyFrame:
        """A table as a LazyFrame; empty with the right schema if the table does not exist."""
        table = table_of(table)
        found = self.delta.open(table)
        if found is None:
            return pl.LazyFrame(schema=self.schema(table))
        return conform(pl.scan_delta(found), self.schema(table))

    def frontier(self) -> dict[tuple[str, TopicPartition], int]:
        """Next offset to archive per (archiver group, Kafka partition)."""
        return read_frontier(self.delta)

    def quarantine(self) -> list[QuarantineEntry]:
        return quarantine_entries(self.delta)

    def quarantined(self, table: str) -> pl.LazyFrame | None:
        return quarantined(self.delta, table_of(table))

    def rejected(self) -> pl.LazyFrame:
        """Undecodable records (original bytes, reason, source offsets)."""
        found = self.delta.open(REJECTED_TABLE)
        if found is None:
            return pl.LazyFrame(schema=pl.from_arrow(REJECTED_SCHEMA.empty_table()).schema)  # type: ignore[union-attr]
        return pl.scan_delta(found)

    def known_hosts(self) -> set[str]:
        """host_id of every archived inventory record, published or quarantined (as the archiver's gate).

        A host that sent an inventory record is known even when its batch failed the gate: the
        compacted inventory topic sends it once, so ignoring quarantined inventory would quarantine
        the host's samples and errors for good.
        """
        frames = [self.scan(INVENTORY_TABLE).select("host_id")]
        held = self.quarantined(INVENTORY_TABLE)
        if held is not None:
            frames.append(held.select(pl.col("host_id").cast(pl.String)))
        hosts = pl.concat(frames).drop_nulls().unique().collect()
        return set(hosts.get_column("host_id").to_list())


def open_lake(path: str | Path, storage_options: dict[str, str] | None = None) -> Lake:
    """The lake at ``path`` for a command that reads one: a missing or wrong path is an error, not an empty lake."""
    lake = Lake(path, storage_options)
    if not lake.tables() and not lake.delta.exists(OFFSETS_TABLE):
        raise LakeError(
            f"no fleetpulse lake at {lake.root}: none of its Delta tables is there "
            "(pass --lake or set FLEETPULSE_LAKE__PATH)"
        )
    return lake


def scan(lake_path: str | Path | DeltaTables | Lake, table: str) -> pl.LazyFrame:
    """``Lake(lake_path).scan(table)``: a table (``host_sampled`` or ``HostSampled``) as a LazyFrame."""
    lake = lake_path if isinstance(lake_path, Lake) else Lake(lake_path)
    return lake.scan(table)
