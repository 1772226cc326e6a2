"""What a worker tells the planner of the finding sources it owns: caught up or not, and how far."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, NamedTuple

from streams.messages import PlanProgress
from streams.plan_order import all_sources
from streams.planner import Planner
from streams.planner_shell import PlannerShell
from streams.policy import Policy


class TP(NamedTuple):
    topic: str
    partition: int


class Consumer:
    """Faust's consumer as the shell reads it: fetched high-water marks, and the broker's end offsets."""

    def __init__(self, fetched: dict[TP, int | None], ends: dict[TP, int]) -> None:
        self.fetched, self.ends, self.listed = fetched, ends, 0

    def assignment(self) -> set[Any]:
        return set(self.fetched)

    def highwater(self, tp: Any) -> int:
        return self.fetched[tp]  # type: ignore[return-value]  # None before the first fetch answer

    async def highwaters(self, *partitions: Any) -> Mapping[Any, int]:
        self.listed += 1
        return {tp: self.ends[tp] for tp in partitions}


def shell(policy: Policy) -> PlannerShell:
    return PlannerShell(
        Planner(policy), {}, size=lambda d: 10, sources=all_sources(1, 1), partitions=1,
        stage_of={"errors": "errors", "summaries": "cluster"}, ordered=True,
    )  # fmt: skip


def idle(progress: PlanProgress | None) -> dict[str, bool]:
    assert progress is not None
    return {m.source: m.idle for m in progress.marks}


def test_a_partition_never_fetched_is_caught_up_once_the_broker_says_it_is_empty(policy: Policy) -> None:
    errors, summaries = TP("errors", 0), TP("summaries", 0)
    consumer = Consumer({errors: 5, summaries: None}, ends={summaries: 0})
    progress = asyncio.run(shell(policy).progress(consumer, {("errors", 0): 4}, committed={}))
    assert idle(progress) == {"errors/0": True, "cluster/0": True}
    assert consumer.listed == 1


def test_a_partition_with_records_left_since_its_commit_is_not_caught_up(policy: Policy) -> None:
    errors, summaries = TP("errors", 0), TP("summaries", 0)
    consumer = Consumer({errors: 5, summaries: 7}, ends={})
    s = shell(policy)
    assert idle(asyncio.run(s.progress(consumer, {}, committed={errors: 5, summaries: 6}))) == {
        "errors/0": True,  # committed at its end at assignment: nothing to read
        "cluster/0": False,  # one record after the commit not handled yet
    }
    assert consumer.listed == 0


def test_progress_is_sent_again_only_when_a_mark_changes(policy: Policy) -> None:
    errors = TP("errors", 0)
    consumer = Consumer({errors: 5, TP("summaries", 0): 0}, ends={})
    s = shell(policy)
    s.source_times.errors_read(0, 1_000)
    assert asyncio.run(s.progress(consumer, {("errors", 0): 4}, {})) is not None
    assert asyncio.run(s.progress(consumer, {("errors", 0): 4}, {})) is None
    s.source_times.errors_read(0, 2_000)
    progress = asyncio.run(s.progress(consumer, {("errors", 0): 4}, {}))
    assert progress is not None and {m.source: m.ts for m in progress.marks}["errors/0"] == 1_999
