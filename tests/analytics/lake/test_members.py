"""The archivers' static split: every partition has exactly one member; a member outside 0 .. N-1 is refused."""

from __future__ import annotations

import pydantic
import pytest

from analytics.lake.layout import TopicPartition
from analytics.lake.members import owned
from ground.settings.lake import LakeSettings


def test_every_partition_has_exactly_one_member() -> None:
    tps = [TopicPartition(t, p) for t, n in (("samples", 24), ("errors", 7), ("actions", 1)) for p in range(n)]
    shares = [owned(tps, member=m, members=3) for m in range(3)]
    assert sorted(tp for share in shares for tp in share) == sorted(tps)
    assert [len(s) for s in shares] == [8 + 3 + 1, 8 + 2, 8 + 2]
    assert owned(tps, member=0, members=1) == tps


def test_a_member_outside_the_members_is_refused() -> None:
    with pytest.raises(pydantic.ValidationError, match="lake.member 2 is not one of 0 .. 1"):
        LakeSettings(members=2, member=2)
    assert LakeSettings(members=2, member=1).member == 1
