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
from typing import Literal, Protocol, TypeVar

import polars as pl
import pyarrow as pa

from analytics.errors import ArchiverError
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


def resume_offsets(
    tables: DeltaTables, group_id: str, tps: Iterable[TopicPartition]
) -> dict[TopicPartition, int]:
    """Next offset to archive for each partition the group has committed (absent: new to the lake)."""
    ids = {app_id(group_id, tp): tp for tp in tps}
    return {ids[app]: v for app, v in tables.versions_of(OFFSETS_TABLE, ids).items() if v is not None}


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
    members: int | None = None,
) -> None:
    """One ``_offsets`` commit: the rows and every partition's new version, atomically (and, given, the split)."""
    versions = {app_id(group_id, tp): next_offsets[tp] for tp in ranges}
    if members is not None:
        versions[split_app_id(group_id)] = members
    tables.append(OFFSETS_TABLE, commit_rows(group_id, ranges, next_offsets, now), versions=versions)


def split_app_id(group_id: str) -> str:
    """The app id whose version is how many archivers split the group's partitions (no partition is named so)."""
    return f"{group_id}:split"


def check_split(tables: DeltaTables, group_id: str, members: int, *, resplit: bool = False) -> int | None:
    """The split the group last committed (None: never recorded); raises if it is not ``members``, unless
    ``resplit`` says every member of the old split has stopped.

    Members of two splits at once would give a partition two owners, and both would append its rows.
    """
    recorded = tables.version_of(OFFSETS_TABLE, split_app_id(group_id))
    if not resplit:
        _same_split(group_id, recorded, members)
    return recorded


def check_owner(
    tables: DeltaTables,
    group_id: str,
    members: int,
    frontier: Mapping[TopicPartition, int],
    tps: Iterable[TopicPartition],
) -> None:
    """Raise unless this archiver still owns ``tps``: the split is still ``members`` and no other archiver
    committed any of them past ``frontier`` (the same member started twice). Checked before a batch's
    first write; a check, not a lock: two copies flushing in the same moment can both pass it."""
    ids = {app_id(group_id, tp): tp for tp in tps}
    split = split_app_id(group_id)
    recorded = tables.versions_of(OFFSETS_TABLE, [split, *ids])
    _same_split(group_id, recorded[split], members)
    for app, tp in sorted(ids.items()):
        if (version := recorded[app]) is not None and version != frontier.get(tp):
            raise ArchiverError(
                f"archiver group {group_id!r}: {tp.topic}[{tp.partition}] was archived up to offset {version} by "
                f"another archiver while this one held it at {frontier.get(tp)}: the same member runs twice; "
                "this one stops without writing its batch"
            )


def _same_split(group_id: str, recorded: int | None, members: int) -> None:
    if recorded is not None and recorded != members:
        raise ArchiverError(
            f"archiver group {group_id!r} splits its partitions between {recorded} members, not {members}: "
            "stop every member, then start one of the new split with --resplit"
        )


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


class _Partition(Protocol):
    @property
    def topic(self) -> str: ...


P = TypeVar("P", bound=_Partition)


def start_offsets(
    begin: Mapping[P, int],
    end: Mapping[P, int],
    start_from: Literal["earliest", "latest"],
    inventory_topic: str | None,
) -> dict[P, int]:
    """Where each partition new to the lake starts: ``start_from``, but inventory always at its beginning.

    The inventory topic is compacted (one record per host, sent once): started at its end, the
    lake would know no host and quarantine every sample and error of a ``latest`` start.
    """
    latest = start_from == "latest"
    return {tp: end[tp] if latest and tp.topic != inventory_topic else first for tp, first in begin.items()}


def lost_to_retention(
    frontier: Mapping[TopicPartition, int], beginning: Mapping[TopicPartition, int]
) -> dict[TopicPartition, tuple[int, int]]:
    """Offsets ``(first, last)`` of each partition that Kafka deleted before the lake archived them.

    ``frontier`` is the next offset the lake would archive, ``beginning`` the first one Kafka
    still holds (or the first one fetched, if lower): everything between was skipped unseen.
    """
    return {
        tp: (frontier[tp], first - 1)
        for tp, first in beginning.items()
        if tp in frontier and first > frontier[tp]
    }
