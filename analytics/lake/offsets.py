"""The archiver's commits: the ``_offsets`` Delta table and the app-transaction versions that make it exact.

Every flush ends with one append to ``_offsets``: a row per Kafka partition of the batch and, in the
same commit, each partition's app-transaction version set to its next offset. That version is where
a restart resumes. Each data, quarantine and rejected table carries the same versions for the
partitions whose rows it holds, so rows a crash left committed in one table and not in the next
are written on the replay only where they are missing.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping

import polars as pl
import pyarrow as pa

from analytics.lake.batch import PartitionRange
from analytics.lake.layout import OFFSETS_TABLE, TopicPartition, app_id
from ground.delta import DeltaTables

OFFSETS_SCHEMA = pa.schema(
    [
        pa.field("group_id", pa.string(), nullable=False),
        pa.field("topic", pa.string(), nullable=False),
        pa.field("partition", pa.int32(), nullable=False),
        pa.field("first_offset", pa.int64()),  # null: a partition's starting point, no records yet
        pa.field("last_offset", pa.int64()),
        pa.field("records", pa.int64(), nullable=False),
        pa.field("next_offset", pa.int64(), nullable=False),
        pa.field("committed_at", pa.timestamp("us", tz="UTC"), nullable=False),
    ]
)


def resume_offsets(tables: DeltaTables, group_id: str, tps: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
    """Next offset to archive for each partition the group has committed (absent: new to the lake)."""
    out = {}
    for tp in tps:
        version = tables.version_of(OFFSETS_TABLE, app_id(group_id, tp))
        if version is not None:
            out[tp] = version
    return out


def commit_rows(
    group_id: str,
    ranges: Mapping[TopicPartition, PartitionRange | None],
    next_offsets: Mapping[TopicPartition, int],
    now: dt.datetime,
) -> pa.Table:
    """The ``_offsets`` rows of one commit (a None range: a starting point without records)."""
    rows = [
        {
            "group_id": group_id,
            "topic": tp.topic,
            "partition": tp.partition,
            "first_offset": None if rng is None else rng.first,
            "last_offset": None if rng is None else rng.last,
            "records": 0 if rng is None else rng.records,
            "next_offset": next_offsets[tp],
            "committed_at": now,
        }
        for tp, rng in sorted(ranges.items())
    ]
    return pa.Table.from_pylist(rows, schema=OFFSETS_SCHEMA)


def commit(
    tables: DeltaTables,
    group_id: str,
    ranges: Mapping[TopicPartition, PartitionRange | None],
    next_offsets: Mapping[TopicPartition, int],
    now: dt.datetime,
) -> None:
    """One ``_offsets`` commit: the rows and every partition's new version, atomically."""
    versions = {app_id(group_id, tp): next_offsets[tp] for tp in ranges}
    tables.append(OFFSETS_TABLE, commit_rows(group_id, ranges, next_offsets, now), versions=versions)


def read_frontier(tables: DeltaTables) -> dict[tuple[str, TopicPartition], int]:
    """Next offset to archive per (group, partition), for every group that ever archived here."""
    table = tables.open(OFFSETS_TABLE)
    if table is None:
        return {}
    frame = (
        pl.scan_delta(table)
        .group_by("group_id", "topic", "partition")
        .agg(pl.col("next_offset").max())
        .collect()
    )
    return {(g, TopicPartition(t, p)): n for g, t, p, n in frame.iter_rows()}
