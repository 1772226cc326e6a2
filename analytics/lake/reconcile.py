"""Restart recovery: delete what a crashed archiver wrote after its last offset commit.

The rule is deterministic: an archiver file (data, quarantine or rejected) of a partition with
a manifest is kept when all its offsets are below the committed ``next_offset`` and deleted when
they all reach it (those records will be consumed again). Nothing straddles a commit, so a file
that does is reported as an integrity error instead of guessed at.
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Collection, Mapping
from typing import NamedTuple

from analytics.errors import LakeIntegrityError
from analytics.lake.catalog import data_files
from analytics.lake.fs import LakeFS, temp_target
from analytics.lake.layout import (
    OFFSETS_DIR,
    QUARANTINE_DIR,
    REJECTED_DIR,
    ArchiveName,
    TopicPartition,
    parse_archive_name,
)
from analytics.lake.quarantine import batch_id_name, quarantine_folders
from analytics.tables import TABLES

log = logging.getLogger(__name__)


class ReconcileReport(NamedTuple):
    deleted: list[str]
    kept: int


def verdict(name: ArchiveName, frontier: Mapping[TopicPartition, int]) -> str:
    """``keep``, ``delete`` or ``foreign`` (no manifest for its partition) for one archiver file."""
    next_offset = frontier.get(name.tp)
    if next_offset is None:
        return "foreign"
    if name.last < next_offset:
        return "keep"
    if name.first >= next_offset:
        return "delete"
    raise LakeIntegrityError(
        f"{name} holds offsets {name.first}-{name.last} but {name.tp} is committed up to {next_offset - 1}; "
        "the file straddles a commit, which the archiver never writes: inspect it by hand"
    )


def _ours(name: ArchiveName | None, partitions: Collection[TopicPartition] | None) -> bool:
    return name is not None and (partitions is None or name.tp in partitions)


def _temp_partition(root: str, target: str) -> TopicPartition | None:
    """The partition whose write left a temp file, from the name the file was going to get."""
    if root == OFFSETS_DIR:
        topic, _, stem = target[len(OFFSETS_DIR) + 1 :].rpartition("/")
        number = stem.removesuffix(".json")
        return TopicPartition(topic, int(number)) if topic and number.isdigit() else None
    if root == QUARANTINE_DIR:
        name = batch_id_name(posixpath.basename(posixpath.dirname(target)))
    else:
        name = parse_archive_name(target)
    return None if name is None else name.tp


def reconcile(
    lake: LakeFS,
    frontier: Mapping[TopicPartition, int],
    partitions: Collection[TopicPartition] | None = None,
) -> ReconcileReport:
    """Delete uncommitted archiver output of ``partitions`` (all with a manifest when None)."""
    doomed: list[str] = []
    kept = 0

    def judge(rel: str, name: ArchiveName | None) -> None:
        nonlocal kept
        if not _ours(name, partitions):
            return
        assert name is not None
        outcome = verdict(name, frontier)
        if outcome == "delete":
            doomed.append(rel)
        elif outcome == "keep":
            kept += 1

    for table in TABLES:
        for rel in data_files(lake, table):
            judge(rel, parse_archive_name(rel))
    for rel in lake.files(REJECTED_DIR):
        if not posixpath.basename(rel).startswith("."):
            judge(rel, parse_archive_name(rel))
    for table, batch_id in quarantine_folders(lake):
        name = batch_id_name(batch_id)
        if _ours(name, partitions) and name is not None and verdict(name, frontier) == "delete":
            doomed.extend(lake.files(f"{QUARANTINE_DIR}/{table}/{batch_id}"))
    for root in (*TABLES, QUARANTINE_DIR, REJECTED_DIR, OFFSETS_DIR):
        for rel in lake.temp_files(root):
            tp = _temp_partition(root, temp_target(rel))
            if tp is not None and (partitions is None or tp in partitions):
                doomed.append(rel)
    for rel in doomed:
        lake.delete(rel)
    if doomed:
        log.warning("reconcile: deleted %d files written after the last offset commit", len(doomed))
        for root in (*TABLES, QUARANTINE_DIR, REJECTED_DIR):
            lake.delete_empty_dirs(root)
    return ReconcileReport(doomed, kept)
