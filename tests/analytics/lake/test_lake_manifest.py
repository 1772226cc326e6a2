"""The per-partition offsets manifest: round trip, monotonic, first commit for new partitions."""

from __future__ import annotations

import pytest

from analytics.errors import LakeError, LakeIntegrityError
from analytics.lake.fs import LakeFS
from analytics.lake.layout import TopicPartition, offsets_path
from analytics.lake.manifest import CommittedRange, commit, initialise, read_frontier, read_manifests
from tests.analytics.lake.helpers import NOW

TP = TopicPartition("fleet.errors", 3)


def test_commit_round_trip(lake: LakeFS) -> None:
    batch = CommittedRange(10, 19, 10, ("xid_raised/date=2025-01-01/fleet.errors-p3-o10-19.parquet",))
    commit(lake, TP, 20, previous=10, batch=batch, now=NOW)
    manifests = read_manifests(lake)
    assert manifests[TP].next_offset == 20
    assert manifests[TP].last_batch == batch
    assert manifests[TP].committed_at.startswith("2025-02-01T00:00:00")
    assert read_frontier(lake) == {TP: 20}
    assert not list(lake.temp_files())


def test_commit_refuses_to_go_backwards(lake: LakeFS) -> None:
    commit(lake, TP, 50, previous=None)
    with pytest.raises(LakeIntegrityError, match="back from 50 to 40"):
        commit(lake, TP, 40, previous=50)
    assert read_frontier(lake) == {TP: 50}


def test_initialise_only_writes_unknown_partitions(lake: LakeFS) -> None:
    other = TopicPartition("fleet.samples", 0)
    commit(lake, TP, 7, previous=None)
    initialise(lake, {TP: 0, other: 3}, known=read_frontier(lake))
    assert read_frontier(lake) == {TP: 7, other: 3}


def test_malformed_manifest_is_reported_with_its_path(lake: LakeFS) -> None:
    lake.write_bytes(offsets_path(TP), b'{"topic": "fleet.errors"}')
    with pytest.raises(LakeError, match="malformed offsets manifest"):
        read_frontier(lake)


def test_empty_lake_has_no_frontier(lake: LakeFS) -> None:
    assert read_frontier(lake) == {}
