"""Committed offsets: one small JSON per Kafka partition, the archiver's only source of truth on restart.

A partition's ``next_offset`` is written (atomically) only after every file of a batch is in
place, so files whose offsets reach it or beyond are leftovers of a crash (see ``reconcile``).
One file per partition keeps commits O(1) and lets archivers own disjoint partitions.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from analytics.errors import LakeError, LakeIntegrityError
from analytics.lake.fs import LakeFS
from analytics.lake.layout import OFFSETS_DIR, TopicPartition, offsets_path

MANIFEST_VERSION = 1


class CommittedRange(NamedTuple):
    """What one commit added for a partition: records at offsets ``first..last`` and the files written."""

    first: int
    last: int
    records: int
    files: tuple[str, ...]


class PartitionManifest(NamedTuple):
    tp: TopicPartition
    next_offset: int
    committed_at: str
    last_batch: CommittedRange | None

    def to_json(self) -> dict[str, Any]:
        return {
            "version": MANIFEST_VERSION,
            "topic": self.tp.topic,
            "partition": self.tp.partition,
            "next_offset": self.next_offset,
            "committed_at": self.committed_at,
            "last_batch": None if self.last_batch is None else self.last_batch._asdict(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PartitionManifest:
        batch = data.get("last_batch")
        return cls(
            TopicPartition(str(data["topic"]), int(data["partition"])),
            int(data["next_offset"]),
            str(data.get("committed_at", "")),
            None
            if batch is None
            else CommittedRange(
                int(batch["first"]), int(batch["last"]), int(batch["records"]), tuple(batch["files"])
            ),
        )


def read_manifests(lake: LakeFS) -> dict[TopicPartition, PartitionManifest]:
    """Every partition's manifest in the lake."""
    out: dict[TopicPartition, PartitionManifest] = {}
    for rel in lake.files(OFFSETS_DIR):
        if not rel.endswith(".json") or rel.rsplit("/", 1)[-1].startswith("."):
            continue
        try:
            manifest = PartitionManifest.from_json(lake.read_json(rel))
        except (KeyError, TypeError, ValueError) as exc:
            raise LakeError(f"malformed offsets manifest: {exc!r}", lake.full(rel)) from exc
        if offsets_path(manifest.tp) != rel:
            raise LakeError(f"manifest names {manifest.tp} but sits at the wrong path", lake.full(rel))
        out[manifest.tp] = manifest
    return out


def read_frontier(lake: LakeFS) -> dict[TopicPartition, int]:
    """Next offset to archive per partition (everything below it is in the lake exactly once)."""
    return {tp: m.next_offset for tp, m in read_manifests(lake).items()}


def commit(
    lake: LakeFS,
    tp: TopicPartition,
    next_offset: int,
    *,
    previous: int | None,
    batch: CommittedRange | None = None,
    now: dt.datetime | None = None,
) -> PartitionManifest:
    """Advance a partition's committed offset; refuses to move it backwards."""
    if previous is not None and next_offset < previous:
        raise LakeIntegrityError(
            f"refusing to move the committed offset of {tp} back from {previous} to {next_offset}",
            lake.full(offsets_path(tp)),
        )
    stamp = (now or dt.datetime.now(dt.UTC)).isoformat(timespec="milliseconds")
    manifest = PartitionManifest(tp, next_offset, stamp, batch)
    lake.write_json(offsets_path(tp), manifest.to_json())
    return manifest


def initialise(
    lake: LakeFS,
    starts: Mapping[TopicPartition, int],
    known: Iterable[TopicPartition],
    now: dt.datetime | None = None,
) -> None:
    """Write a first manifest for partitions the lake has never seen, at their starting offset.

    From then on, archiver files of that partition at or beyond the manifest are leftovers, even
    if the archiver crashes before its first batch commit.
    """
    seen = set(known)
    for tp, start in starts.items():
        if tp not in seen:
            commit(lake, tp, start, previous=None, now=now)
