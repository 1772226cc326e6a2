"""Host-window stage: what it sends the cluster stage, and that a checkpoint resumes it exactly."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import pytest
from aiokafka import TopicPartition
from aiokafka.errors import KafkaError

from schemas import Codec
from streams.core.peers.messages import ClusterItem, HostSummary, SourceIdle, SourceProgress
from streams.core.peers.stage import ClusterStage
from streams.core.policy import Policy
from streams.core.samples.checkpoint import PartitionState
from streams.core.samples.folder import SampleFolder
from streams.core.samples.idle import IdleSources, caught_up
from streams.metrics import DetectMetrics
from streams.sample_partitions import SamplePartitions
from streams.samples import SamplesStage
from streams.testing import START_TS
from tests.streams import factories as f

MIN = 60_000


def samples(hosts: int, minutes: int, seed: int = 5) -> list[dict[str, Any]]:
    """One partition's records: every host samples every minute, two clusters, a little jitter."""
    rng = random.Random(seed)
    out = []
    for m in range(minutes):
        for h in range(hosts):
            ts = START_TS + m * MIN + rng.randrange(0, 5_000)
            out.append(f.sample(1000.0 + rng.gauss(0, 10), 380.0, host=f"h{h}", cluster=f"c{h % 2}", ts=ts))
    return out


def fold_all(folder: SampleFolder, state: PartitionState, records: list[dict[str, Any]]) -> list[ClusterItem]:
    out: list[ClusterItem] = []
    for record in records:
        msgs, _ = folder.fold(state, record)
        out += msgs
        state.next_offset += 1
    return out


def folder(clusters: set[str] | None = None) -> SampleFolder:
    return SampleFolder(Policy(), nsrc=4, clusters=lambda: clusters or set())


def test_checkpoint_round_trips_through_bytes() -> None:
    state = PartitionState(partition=3)
    fold_all(folder(), state, samples(4, 12))
    again = PartitionState.from_bytes(state.to_bytes())
    assert again == state and again.next_offset == 48


def test_checkpoint_of_another_version_is_refused() -> None:
    body = json.loads(PartitionState(partition=0).to_bytes())
    body["v"] = 99
    with pytest.raises(ValueError, match="version 99"):
        PartitionState.from_bytes(json.dumps(body).encode())


@pytest.mark.parametrize("cut", [1, 17, 40, 61, 95])
def test_resuming_from_a_checkpoint_sends_what_an_uninterrupted_run_sends(cut: int) -> None:
    records = samples(6, 20)
    straight = fold_all(folder(), PartitionState(partition=1), records)

    first = PartitionState(partition=1)
    before = fold_all(folder(), first, records[:cut])
    restored = PartitionState.from_bytes(first.to_bytes())  # a new worker, a fresh folder
    after = fold_all(folder(), restored, records[restored.next_offset :])
    assert [m for m in before + after if isinstance(m, HostSummary)] == [
        m for m in straight if isinstance(m, HostSummary)
    ]
    assert restored == PartitionState.from_bytes(_state_after(records).to_bytes())


def _state_after(records: list[dict[str, Any]]) -> PartitionState:
    state = PartitionState(partition=1)
    fold_all(folder(), state, records)
    return state


def test_summaries_carry_their_source_partition_and_close_each_window_once() -> None:
    out = fold_all(folder(), PartitionState(partition=2), samples(3, 16))
    summaries = [m for m in out if isinstance(m, HostSummary)]
    keys = [(m.host_id, m.window_start) for m in summaries]
    assert len(keys) == len(set(keys)) and len(summaries) >= 3 * 2  # 5-min windows in 16 min
    assert {(m.src, m.nsrc) for m in summaries} == {(2, 4)}
    assert all(m.n == 5 and m.cluster == f"c{int(m.host_id[1:]) % 2}" for m in summaries)


def test_progress_goes_to_every_known_cluster_once_per_window() -> None:
    state = PartitionState(partition=0)
    out = fold_all(folder({"c9"}), state, samples(2, 11))
    marks = [m for m in out if isinstance(m, SourceProgress)]
    windows = {(m.wm - START_TS) // (5 * MIN) for m in marks}
    assert windows == {0, 1, 2}  # minutes 0-10: three 5-min windows entered
    first = [m.cluster for m in marks if m.wm < START_TS + 5 * MIN]
    assert first == ["c0", "c9"]  # c1's first sample comes after the window was entered
    assert {m.cluster for m in marks[-3:]} == {"c0", "c1", "c9"}


def test_samples_without_a_job_move_time_but_open_no_window() -> None:
    state = PartitionState(partition=0)
    msgs, late = folder().fold(state, f.sample(job=None, host="idle", ts=START_TS + MIN))
    assert not late and state.hosts == {} and state.wm == START_TS + MIN
    assert [type(m) for m in msgs] == [SourceProgress]


def test_a_partition_is_idle_only_after_the_whole_timeout_caught_up() -> None:
    idle = IdleSources(timeout_ms=30_000)
    assert not idle.observe(0, caught_up=True, now_ms=0)
    assert not idle.observe(0, caught_up=True, now_ms=29_999)
    assert idle.observe(0, caught_up=True, now_ms=30_000)
    assert not idle.observe(0, caught_up=True, now_ms=45_000)
    assert idle.observe(0, caught_up=True, now_ms=60_000)  # again, for clusters that appeared since
    assert not idle.observe(0, caught_up=False, now_ms=61_000) and idle.declared() == [0]  # a stale fetch
    assert idle.resume(0) and not idle.resume(0)  # records again: say so once, then it is like any other
    assert not idle.observe(0, caught_up=True, now_ms=70_000)
    assert idle.observe(0, caught_up=True, now_ms=100_000)


def test_an_announcement_nobody_could_hear_is_made_again_at_once() -> None:
    idle = IdleSources(timeout_ms=30_000)
    idle.observe(0, caught_up=True, now_ms=0)
    assert idle.observe(0, caught_up=True, now_ms=30_000)
    idle.retract(0)  # the inventory was still empty
    assert idle.observe(0, caught_up=True, now_ms=30_200)


def test_one_fetch_with_something_to_read_restarts_the_idle_clock() -> None:
    idle = IdleSources(timeout_ms=30_000)
    idle.observe(1, caught_up=True, now_ms=0)
    idle.observe(1, caught_up=False, now_ms=20_000)  # a broker outage, a backlog: not idle
    assert not idle.observe(1, caught_up=True, now_ms=40_000)
    assert idle.observe(1, caught_up=True, now_ms=70_000)
    idle.forget(1)  # revoked: the next owner decides
    assert not idle.resume(1)


def test_a_partition_taken_over_announces_its_first_records() -> None:
    """The previous owner may have declared it idle before it died; the cluster stage must hear it is not."""
    idle = IdleSources(timeout_ms=30_000)
    idle.take_over(2)
    assert idle.declared() == []  # not idle in this worker's eyes
    assert idle.resume(2) and not idle.resume(2)


def test_caught_up_needs_a_fresh_fetch_answer() -> None:
    assert caught_up(10, highwater=10, polled_ms=9_000, now_ms=10_000, fresh_ms=2_000)
    assert not caught_up(9, highwater=10, polled_ms=9_000, now_ms=10_000, fresh_ms=2_000)  # records left
    assert not caught_up(10, highwater=10, polled_ms=5_000, now_ms=10_000, fresh_ms=2_000)  # fetches failing
    assert not caught_up(0, highwater=None, polled_ms=None, now_ms=10_000, fresh_ms=2_000)  # never fetched


def test_idle_and_progress_notices_carry_the_partition_and_its_event_time() -> None:
    state = PartitionState(partition=3, wm=START_TS)
    notices = folder({"c1", "c0"}).progress(state, "idle")
    assert notices == [SourceIdle(cluster=c, src=3, nsrc=4, wm=START_TS) for c in ("c0", "c1")]


# -- the stage, driven with a fake producer: what a checkpoint may hold after an interrupted fold ---------


@dataclass
class FakeMessage:
    """The fields of an aiokafka ``ConsumerRecord`` the stage reads."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: int | None


class FakeProducer:
    """Records every send; a send to a topic in ``failing`` is acknowledged with an error."""

    def __init__(self, failing: frozenset[str] = frozenset()) -> None:
        self.sent: list[tuple[str, bytes]] = []
        self.failing = failing

    async def send(self, topic: str, *, key: bytes, value: bytes, partition: int | None = None) -> Any:
        self.sent.append((topic, value))
        ack: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if topic in self.failing:
            ack.set_exception(ConnectionError("not acknowledged"))
        else:
            ack.set_result(None)
        return ack

    def checkpoints(self) -> list[PartitionState]:
        return [PartitionState.from_bytes(v) for t, v in self.sent if t == "checkpoints"]


async def _no_dead_letter(*_: Any) -> Any:
    raise AssertionError("no record here is invalid")


def stage(
    producer: FakeProducer, dead_letter: Callable[..., Awaitable[Any]] = _no_dead_letter
) -> SamplesStage:
    """A stage owning partition 0 of ``samples``, its clock just after the records' hour."""
    partitions = SamplePartitions(
        topic="samples",
        summaries_topic="summaries",
        checkpoint_topic="checkpoints",
        client_config={},
        folder=folder({"c0", "c1"}),
        codec=Codec(),
        policy=Policy(),
        metrics=DetectMetrics(),
        dead_letter=dead_letter,
        clock=lambda: (START_TS + 90 * MIN) / 1000,
    )
    s = SamplesStage(partitions, group_id="g", checkpoint_s=60.0)
    s.partitions.producer = cast(Any, producer)
    s.partitions.parts[0] = PartitionState(partition=0)
    return s


def messages(records: Sequence[dict[str, Any] | None], first: int = 0) -> list[Any]:
    """Records encoded as partition 0 holds them from offset ``first``; None is a value that cannot decode."""
    codec = Codec()
    return [
        FakeMessage("samples", 0, first + n, None, b"garbage" if r is None else codec.encode(r), None)
        for n, r in enumerate(records)
    ]


def test_a_fold_cancelled_midway_leaves_the_last_checkpoint_standing() -> None:
    """Cancelled at a yield (SIGTERM), a fold has closed windows it has not sent: saving them would lose them."""
    records = samples(6, 77)

    async def go() -> tuple[FakeProducer, SamplesStage]:
        producer = FakeProducer()
        s = stage(producer)
        await s.partitions.fold_batch(0, messages(records[:20]))  # partition 0 dirty, not checkpointed yet
        task = asyncio.create_task(s.partitions.fold_batch(0, messages(records[20:460], 20)))
        await asyncio.sleep(0)  # the fold runs to its first yield
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert s.partitions.parts[0].next_offset > 20  # really torn: state ahead, its summaries never sent
        await s.partitions.checkpoint(sorted(s.partitions.dirty))  # as ``run()`` does on the way out
        return producer, s

    producer, s = asyncio.run(go())
    assert not [c for c in producer.checkpoints() if c.next_offset > 20]
    assert s.partitions.dirty == {0}  # still to be checkpointed, once a fold of it completes


def test_a_fold_cancelled_midway_is_not_checkpointed_when_revoked() -> None:
    records = samples(6, 77)

    async def go() -> tuple[FakeProducer, SamplesStage]:
        producer = FakeProducer()
        s = stage(producer)
        await s.partitions.fold_batch(0, messages(records[:20]))
        await s.partitions.checkpoint(sorted(s.partitions.dirty))
        task = asyncio.create_task(s.partitions.fold_batch(0, messages(records[20:460], 20)))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await s.partitions.on_revoked({TopicPartition("samples", 0)})
        return producer, s

    producer, s = asyncio.run(go())
    assert [c.next_offset for c in producer.checkpoints()] == [20] and s.partitions.parts == {}


def test_a_fold_failing_at_a_dead_letter_leaves_the_last_checkpoint_standing() -> None:
    records: list[dict[str, Any] | None] = list(samples(6, 77))
    records[300] = None  # offset 300: a record that cannot decode, and the dead-letter topic is down

    async def dlq_down(exc: Exception, source: Any) -> Any:
        raise ConnectionError("dead-letter topic unreachable")

    async def go() -> FakeProducer:
        producer = FakeProducer()
        s = stage(producer, dlq_down)
        await s.partitions.fold_batch(0, messages(records[:20]))
        with pytest.raises(ConnectionError):
            await s.partitions.fold_batch(0, messages(records[20:460], 20))
        assert s.partitions.parts[0].next_offset == 300
        await s.partitions.checkpoint(sorted(s.partitions.dirty))
        return producer

    producer = asyncio.run(go())
    assert not [c for c in producer.checkpoints() if c.next_offset > 20]


def test_a_summary_send_that_failed_blocks_every_later_checkpoint() -> None:
    records = samples(6, 77)

    async def go() -> FakeProducer:
        producer = FakeProducer(failing=frozenset({"summaries"}))
        s = stage(producer)
        await s.partitions.fold_batch(0, messages(records[:460]))
        for _ in range(2):  # the failure is not forgotten once reported
            with pytest.raises(ConnectionError):
                await s.partitions.checkpoint(sorted(s.partitions.dirty))
        return producer

    producer = asyncio.run(go())
    assert producer.checkpoints() == [] and any(t == "summaries" for t, _ in producer.sent)


def test_a_host_with_a_fast_clock_does_not_make_its_peers_late() -> None:
    """A clock 6 min ahead (within ``max_future``, past ``cluster_grace``) must not close the cluster's windows."""
    policy = Policy()
    hosts, state = SampleFolder(policy, nsrc=1, clusters=lambda: {"c0"}), PartitionState(partition=0)
    clusters, store = ClusterStage(policy.slow_host), {}  # type: ignore[var-annotated]
    rng = random.Random(7)
    findings, late = [], 0
    for n, step in enumerate(range(0, 3600, 10)):
        now = START_TS + step * 1000  # the true time: every host samples now, h5 stamps it 6 min ahead
        items: list[ClusterItem] = []
        for h in range(10):
            step_ms = 1000.0 * (1.1 if h == 2 else 1.0) * (1 + rng.gauss(0, 0.01))
            ts = now + (6 * MIN if h == 5 else 0)
            items += hosts.fold(state, f.sample(step_ms, 380.0, interval_s=10, host=f"h{h}", ts=ts), now)[0]
        found, _, n_late = clusters.add_bundle(store, "c0", items, f"0.{n}")
        findings += found
        late += n_late
    assert late == 0
    assert [x.host_id for x in findings] == ["h2"]


def test_a_stage_whose_run_fails_starts_again_from_its_checkpoints() -> None:
    """A broker gone past a request timeout ends run() with an error; the stage must come back by itself."""
    s = stage(FakeProducer())
    s.partitions.dirty.add(0)
    s.partitions.torn.add(0)
    owned_at_start: list[list[int]] = []

    async def run() -> None:
        owned_at_start.append(sorted(s.partitions.parts))
        if len(owned_at_start) == 1:
            raise KafkaError("LeaderNotAvailableError")

    s.run = run  # type: ignore[method-assign]
    asyncio.run(s.run_until_stopped(retry_s=0.0))
    assert owned_at_start == [[0], []]  # each partition reloads its checkpoint when assigned again
    assert s.restarts == 1 and not s.partitions.dirty and not s.partitions.torn


def test_a_cancellation_from_inside_the_client_is_a_failure_but_cancelling_the_stage_stops_it() -> None:
    """aiokafka can end a call with CancelledError while the broker is gone; only our own cancel means stop."""
    s = stage(FakeProducer())
    calls: list[int] = []

    async def run() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise asyncio.CancelledError  # raised by the client, the task itself was not cancelled
        await asyncio.sleep(3600)

    s.run = run  # type: ignore[method-assign]

    async def main() -> None:
        task = asyncio.create_task(s.run_until_stopped(retry_s=0.0))
        while len(calls) < 2 and not task.done():
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert len(calls) == 2 and s.restarts == 1
