"""What a worker tells the planner of the finding sources it owns: caught up or not, and how far."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from aiokafka.partitioner import DefaultPartitioner

from schemas.progress import WriterProgress
from streams.core.messages import PlanProgress
from streams.core.planning.order import all_sources
from streams.core.planning.planner import Planner
from streams.core.planning.writers import WriterMarks
from streams.core.policy import Policy
from streams.planner_shell import PlannerShell


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


def shell(
    policy: Policy,
    *,
    quiet_s: float = 0.0,
    clock: Callable[[], float] = lambda: 0.0,
    writers: WriterMarks | None = None,
) -> PlannerShell:
    return PlannerShell(
        Planner(policy),
        {},
        size=lambda d: 10,
        sources=all_sources(1, 1),
        partitions=1,
        stage_of={"errors": "errors", "summaries": "cluster"},
        ordered=True,
        quiet_s=quiet_s,
        clock=clock,
        writers=writers,
    )


def errors_mark(progress: PlanProgress | None) -> tuple[int | None, bool]:
    assert progress is not None
    return {m.source: (m.ts, m.idle) for m in progress.marks}["errors/0"]


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


def test_a_source_is_idle_only_once_it_has_been_quiet_for_a_while(policy: Policy) -> None:
    """A finding of another source still in flight (a producer's retry) gets ``quiet_s`` to arrive."""
    errors, summaries = TP("errors", 0), TP("summaries", 0)
    now = [0.0]
    s = shell(policy, quiet_s=1.0, clock=lambda: now[0])
    consumer = Consumer({errors: 5, summaries: 0}, ends={})

    def marks(handled: int) -> dict[str, bool]:
        s._marks_sent = ()  # look at every answer, not only changed ones
        return idle(asyncio.run(s.progress(consumer, {("errors", 0): handled}, {})))

    assert marks(4) == {"errors/0": False, "cluster/0": False}  # caught up just now
    now[0] = 1.0
    assert marks(4) == {"errors/0": True, "cluster/0": True}
    consumer.fetched[errors] = 6
    now[0] = 1.5
    assert marks(5)["errors/0"] is False  # a new record: quiet again from now
    now[0] = 2.5
    assert marks(5)["errors/0"] is True


def test_a_cluster_source_is_not_idle_while_the_samples_stage_feeding_it_is_behind(policy: Policy) -> None:
    consumer = Consumer({TP("errors", 0): 0, TP("summaries", 0): 0}, ends={})
    progress = asyncio.run(shell(policy).progress(consumer, {}, {}, upstream_quiet=False))
    assert idle(progress) == {"errors/0": True, "cluster/0": False}


def test_a_partition_back_after_a_rebalance_is_quiet_again_only_after_quiet_s(policy: Policy) -> None:
    """What was seen of it before it was taken away is out of date: it may have had records since."""
    errors, summaries = TP("errors", 0), TP("summaries", 0)
    now = [0.0]
    s = shell(policy, quiet_s=1.0, clock=lambda: now[0])
    consumer = Consumer({errors: 5, summaries: 0}, ends={})

    def marks() -> dict[str, bool]:
        s._marks_sent = ()
        return idle(asyncio.run(s.progress(consumer, {("errors", 0): 4}, {})))

    marks()
    now[0] = 1.0
    assert marks()["errors/0"] is True
    s.revoked({errors, summaries})
    now[0] = 30.0  # assigned again, the same offset handled last
    assert marks()["errors/0"] is False
    now[0] = 31.0
    assert marks()["errors/0"] is True


def test_a_partition_back_after_a_rebalance_asks_the_broker_for_its_end_again(policy: Policy) -> None:
    errors, summaries = TP("errors", 0), TP("summaries", 0)
    consumer = Consumer({errors: 0, summaries: None}, ends={summaries: 0})
    s = shell(policy)
    assert idle(asyncio.run(s.progress(consumer, {}, {})))["cluster/0"] is True  # listed empty
    s.revoked({summaries})
    consumer.ends[summaries] = 9  # another worker's records since; the broker does not answer now

    async def no_answer(*partitions: Any) -> Mapping[Any, int]:
        raise TimeoutError

    consumer.highwaters = no_answer  # type: ignore[method-assign]
    s._marks_sent = ()
    assert idle(asyncio.run(s.progress(consumer, {}, {})))["cluster/0"] is False


def test_a_worker_owning_no_samples_partition_idles_a_cluster_source_whose_clusters_are_drained(
    policy: Policy,
) -> None:
    """Its own samples stage has nothing to be caught up on: the samples partitions' idle notices say it."""
    summaries = TP("summaries", 0)
    consumer = Consumer({TP("errors", 0): 0, summaries: 0}, ends={})
    s = shell(policy)

    def cluster_idle() -> bool:
        s._marks_sent = ()
        return idle(asyncio.run(s.progress(consumer, {}, {}, upstream_quiet=False)))["cluster/0"]

    s.source_times.cluster_read(0, "c0", 1_000, drained=False)
    assert cluster_idle() is False
    s.source_times.cluster_read(0, "c0", 1_000, drained=True)
    assert cluster_idle() is True
    s.revoked({summaries})  # what its clusters said is forgotten with it
    assert cluster_idle() is False


def test_a_cluster_source_no_cluster_feeds_is_idle_once_the_inventory_is_known(policy: Policy) -> None:
    """A worker owning no samples partition, and a summaries partition no cluster's summaries go to.

    Nothing will ever say its clusters are drained: without the inventory it held every finding back.
    """
    s = PlannerShell(
        Planner(policy),
        {},
        size=lambda d: 10,
        sources=all_sources(1, 2),
        partitions=2,
        stage_of={"errors": "errors", "summaries": "cluster"},
        ordered=True,
        quiet_s=0.0,
        clock=lambda: 0.0,
    )
    fed = next(c for c in (f"c{i}" for i in range(50)) if s.partition_of(c) == 0)
    consumer = Consumer({TP("errors", 0): 0, TP("summaries", 0): 0, TP("summaries", 1): 0}, ends={})

    def cluster_idle(clusters: set[str] | None) -> dict[str, bool]:
        s._marks_sent = ()
        marks = idle(asyncio.run(s.progress(consumer, {}, {}, upstream_quiet=False, clusters=clusters)))
        return {k: v for k, v in marks.items() if k.startswith("cluster")}

    assert cluster_idle(None) == {"cluster/0": False, "cluster/1": False}  # inventory not read yet
    assert cluster_idle({fed}) == {"cluster/0": False, "cluster/1": True}
    s.source_times.cluster_read(1, "new", None, drained=False)  # a cluster the inventory lacks came on it
    assert cluster_idle({fed}) == {"cluster/0": False, "cluster/1": False}


def test_a_clusters_summaries_partition_is_the_one_the_samples_stage_producer_picks(policy: Policy) -> None:
    """The samples stage sends summaries keyed by cluster with aiokafka's default partitioner."""
    s = PlannerShell(
        Planner(policy),
        {},
        size=lambda d: 10,
        sources=all_sources(1, 6),
        partitions=6,
        stage_of={"errors": "errors", "summaries": "cluster"},
        ordered=True,
    )
    partitions = list(range(6))
    for cluster in ["rsc1", "rsc2", "c0", "ib-east", "roce-west-17"]:
        assert s.partition_of(cluster) == DefaultPartitioner()(cluster.encode(), partitions, partitions)


def test_an_errors_partition_passes_its_declared_writers_time_with_no_quiet_time(policy: Policy) -> None:
    """The writer said nothing at or before 2_000 follows once offset 4 is handled: no grace to wait out."""
    consumer = Consumer({TP("errors", 0): 5, TP("summaries", 0): 0}, ends={})
    writers = WriterMarks(frozenset({"sim"}))
    s = shell(policy, quiet_s=1.0, writers=writers)
    s.source_times.errors_read(0, 2_000, offset=3)
    writers.note(WriterProgress("sim", "errors", 0, 4, 2_000))
    progress = asyncio.run(s.progress(consumer, {("errors", 0): 3}, {}))
    assert errors_mark(progress) == (1_999, False)
    assert not s.nudged.is_set()
    s.source_times.errors_read(0, 2_000, offset=4)  # the record the report waited for
    assert s.nudged.is_set()
    progress = asyncio.run(s.progress(consumer, {("errors", 0): 4}, {}))
    assert errors_mark(progress) == (2_000, False)


def test_without_declared_writers_the_mark_is_the_last_record_less_one(policy: Policy) -> None:
    consumer = Consumer({TP("errors", 0): 5, TP("summaries", 0): 0}, ends={})
    s = shell(policy, quiet_s=1.0)
    s.source_times.errors_read(0, 2_000, offset=4)
    progress = asyncio.run(s.progress(consumer, {("errors", 0): 4}, {}))
    assert errors_mark(progress) == (1_999, False)


def test_a_report_waiting_for_a_record_sends_progress_when_the_record_is_handled(policy: Policy) -> None:
    """Not on the report and again on the record: each progress is a message on every planner partition."""
    consumer = Consumer({TP("errors", 0): 5, TP("summaries", 0): 0}, ends={})
    writers = WriterMarks(frozenset({"sim"}))
    s = shell(policy, quiet_s=1.0, writers=writers)
    s.source_times.errors_read(0, 2_000, offset=3)
    asyncio.run(s.progress(consumer, {("errors", 0): 3}, {}))
    writers.note(WriterProgress("sim", "errors", 0, 3, 2_500))
    s.writer_reported()
    assert s.nudged.is_set()  # nothing to wait for: at once
    s.nudged.clear()
    writers.note(WriterProgress("sim", "errors", 0, 4, 3_000))
    s.writer_reported()
    assert not s.nudged.is_set()  # offset 4 is not handled yet
    s.source_times.errors_read(0, 3_000, offset=4)
    assert s.nudged.is_set()
