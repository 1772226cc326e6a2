"""The fuzzer: distinct poison of five kinds in both topics, every record detectably bad; the mixer."""

from __future__ import annotations

import random
import time
from collections import Counter

import pytest

from fleetpulse.faults.kafka_io import Message
from fleetpulse.faults.poison import KINDS, fuzz
from fleetpulse.faults.scenarios.poison_flood import event_order, mix
from schemas import Codec, DecodeError
from streams.core.errors import InvalidRecordError
from streams.core.policy import load_policy
from streams.core.validate import check
from streams.testing import Scenario

CODEC = Codec()


@pytest.fixture(scope="module")
def templates() -> list[dict]:
    out = []
    for _, _, value in Scenario(duration_min=30).records():
        try:
            out.append(CODEC.decode(value).record)
        except DecodeError:
            continue  # the scenario's own poison
    return out


def test_fuzz_makes_distinct_records_of_every_kind_in_both_topics(templates: list[dict]) -> None:
    poison = fuzz(templates, 500, now_ms=int(time.time() * 1000), seed=3)
    assert len({p.value for p in poison}) == 500
    assert Counter(p.kind for p in poison) == {k: 100 for k in KINDS}
    assert Counter(p.family for p in poison) == {"samples": 250, "errors": 250}


def test_fuzz_is_deterministic_for_a_seed(templates: list[dict]) -> None:
    now = 1_800_000_000_000
    assert fuzz(templates, 50, now_ms=now, seed=1) == fuzz(templates, 50, now_ms=now, seed=1)
    assert fuzz(templates, 50, now_ms=now, seed=1) != fuzz(templates, 50, now_ms=now, seed=2)


def test_every_poison_record_fails_decoding_or_validation(templates: list[dict]) -> None:
    """What the DLQ goal rests on: no poison record is believable (else 100 % would be unreachable)."""
    now = int(time.time() * 1000)
    limits = load_policy(None).validation
    passed = []
    for p in fuzz(templates, 1000, now_ms=now, seed=5):
        try:
            check(CODEC.decode(p.value).record, limits, now)
        except (DecodeError, InvalidRecordError):
            continue
        passed.append(p.kind)
    assert passed == []


def test_mix_keeps_order_and_adds_duplicates_after_their_original() -> None:
    normal = [Message(0, i, b"k", f"v{i}".encode(), {"ts": i}) for i in range(50)]
    items, dups = mix(normal, [], 10, random.Random(1))
    values = [v for _, v in items]
    assert dups == 10 and len(values) == 60
    firsts = [v for i, v in enumerate(values) if v not in values[:i]]
    assert firsts == [f"v{i}".encode() for i in range(50)]  # first copies in the original order


def test_event_order_merges_partitions_by_time_keeping_each_partition_in_order() -> None:
    a = [Message(0, o, None, b"", {"ts": ts}) for o, ts in enumerate([1, 5, 9])]
    b = [Message(1, o, None, b"", {"ts": ts}) for o, ts in enumerate([2, 3, 10])]
    merged = event_order([*b, *a])
    assert [(m.partition, m.offset) for m in merged] == [(0, 0), (1, 0), (1, 1), (0, 1), (0, 2), (1, 2)]
