"""The archivers' static split: every partition has exactly one member; a member outside 0 .. N-1 is refused;
a member of another split than the lake recorded stops."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest
from kafka import TopicPartition as KafkaTP

from analytics.errors import ArchiverError
from analytics.lake import offsets
from analytics.lake.archiver import Archiver
from analytics.lake.batch import plan_batch
from analytics.lake.layout import TopicPartition, app_id
from analytics.lake.members import owned
from ground.delta import DeltaTables
from ground.settings import Settings
from ground.settings.lake import LakeSettings
from schemas import Codec
from tests.analytics.lake.helpers import NOW, FakeConsumer, as_consumed, event_ids, frontier, lake_settings

GROUP = LakeSettings().group_id


def test_every_partition_has_exactly_one_member() -> None:
    tps = [
        TopicPartition(t, p) for t, n in (("samples", 24), ("errors", 7), ("actions", 1)) for p in range(n)
    ]
    shares = [owned(tps, member=m, members=3) for m in range(3)]
    assert sorted(tp for share in shares for tp in share) == sorted(tps)
    assert [len(s) for s in shares] == [8 + 3 + 1, 8 + 2, 8 + 2]
    assert owned(tps, member=0, members=1) == tps


def test_a_member_outside_the_members_is_refused() -> None:
    with pytest.raises(pydantic.ValidationError, match="lake.member 2 is not one of 0 .. 1"):
        LakeSettings(members=2, member=2)
    assert LakeSettings(members=2, member=1).member == 1


def test_a_member_of_another_split_stops_before_it_commits(
    lake: DeltaTables, records: list[dict[str, Any]], publisher_factory
) -> None:  # type: ignore[no-untyped-def]
    """Members of two splits at once give a partition two owners; the split each commit records stops the old one
    before it writes."""
    consumed = as_consumed(records, partitions=4)
    publisher_factory(members=2, member=0).publish(plan_batch(consumed[:10], Codec()))
    assert offsets.check_split(lake, GROUP, 2) == 2
    before = frontier(lake)

    with pytest.raises(
        ArchiverError, match=f"group '{GROUP}' splits its partitions between 2 members, not 3"
    ):
        publisher_factory(members=3, member=0).publish(plan_batch(consumed[10:], Codec()))
    assert frontier(lake) == before
    assert len(event_ids(lake)) == 10, "a refused batch writes no rows"
    assert offsets.check_split(lake, GROUP, 3, resplit=True) == 2


def test_the_split_is_recorded_under_an_id_no_partition_has() -> None:
    assert offsets.split_app_id(GROUP) != app_id(GROUP, TopicPartition("split", 0))


def test_a_lake_from_before_the_split_record_accepts_the_first_split(lake: DeltaTables) -> None:
    tp = TopicPartition("fleet.errors", 0)
    offsets.commit(lake, GROUP, {tp: None}, {tp: 5}, NOW)
    assert offsets.check_split(lake, GROUP, 3) is None
    offsets.commit(lake, GROUP, {tp: None}, {tp: 5}, NOW, 3)
    assert offsets.check_split(lake, GROUP, 3) == 3


def test_an_archiver_started_with_another_split_refuses_unless_told_the_old_one_stopped(
    lake: DeltaTables,
) -> None:
    def start(members: int, *, resplit: bool = False) -> FakeConsumer:
        settings = Settings(lake=lake_settings(members=members, member=0, quality={"enabled": False}))
        consumer = FakeConsumer()
        Archiver(settings, lake=lake, clock=lambda: NOW, resplit=resplit)._start(consumer, tps)
        return consumer

    tps = [KafkaTP("fleet.errors", p) for p in range(4)]
    start(2)
    assert offsets.check_split(lake, GROUP, 2) == 2
    with pytest.raises(ArchiverError, match="between 2 members, not 3: stop every member"):
        start(3)
    assert start(3, resplit=True).seeks == dict.fromkeys(tps, 5)
    assert (
        offsets.check_split(lake, GROUP, 3) == 3
    )  # recorded at the start: the old members stop at their next flush
    assert start(3).seeks == dict.fromkeys(tps, 5)


def test_a_second_copy_of_a_member_stops_before_it_writes(
    lake: DeltaTables, records: list[dict[str, Any]], publisher_factory
) -> None:  # type: ignore[no-untyped-def]
    """Two archivers started as the same member both own its partitions; whichever flushes second finds them
    committed past where it stands and stops before its batch's first row."""
    consumed = as_consumed(records, partitions=4)
    first, second = publisher_factory(), publisher_factory()
    first.publish(plan_batch(consumed[:10], Codec()))
    before = frontier(lake)

    with pytest.raises(
        ArchiverError, match=r"was archived up to offset \d+ by another archiver .* runs twice"
    ):
        second.publish(plan_batch(consumed[:10], Codec()))
    assert frontier(lake) == before
    assert len(event_ids(lake)) == 10, "the second copy wrote no rows"
    first.publish(plan_batch(consumed[10:20], Codec()))
    assert len(event_ids(lake)) == 20
