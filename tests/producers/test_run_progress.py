"""The simulator's promise after each tick never passes an event it still holds back to send late."""

from __future__ import annotations

from functools import cache
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.errors import KafkaTimeoutError
from kafka.partitioner.default import murmur2

from producers.config import load_fleet_config
from producers.fault_process import calibrate, fault_schedule
from producers.fleet import DAY_MS, Fleet, build_fleet
from producers.generator import FleetAgents, LateDelivery
from producers.noise import noise_schedule
from producers.run_progress import held_times, promises
from producers.schedule import Schedule
from producers.writer_progress import ProgressReporter
from schemas import topic_family
from schemas.progress import WriterProgress, decode_progress
from tests.producers.conftest import START

INTERVAL_S = 600


@cache
def schedules(seed: int) -> tuple[Fleet, Schedule, Schedule]:
    fleet = build_fleet(load_fleet_config("small"), seed, START, START + DAY_MS // 2)
    faults, _ = fault_schedule(fleet, calibrate(fleet))
    return fleet, faults, noise_schedule(fleet)


def agents(seed: int, fraction: float, delay_ticks: int) -> FleetAgents:
    fleet, faults, noise = schedules(seed)
    late = LateDelivery(fraction, delay_ticks * INTERVAL_S, duplicate_fraction=0.01)
    return FleetAgents(fleet, faults, noise, run_id=f"r{seed}", interval_s=INTERVAL_S, late=late)


def partitioner(n: int) -> Any:
    """Every topic's partition of an event, as the Kafka sink's default partitioner picks it."""
    return lambda event_type, key: (topic_family(event_type), (murmur2(key) & 0x7FFFFFFF) % n)


def broken_promises(run: FleetAgents, n: int) -> tuple[int, int]:
    """(events at or before a time already promised on their partition, events sent after a later tick)."""
    where = partitioner(n)
    promised: dict[Any, int] = {}
    broken = late = 0
    last_tick: int | None = None
    for tick in run.ticks():
        for batch in tick.batches:
            for event_type, key, ts in zip(
                batch.event_types(), batch.keys(), batch.event_times.tolist(), strict=True
            ):
                part = where(event_type, key)
                broken += part in promised and ts <= promised[part]
                late += last_tick is not None and ts <= last_tick
        parts = {(family, p) for family in ("inventory", "samples", "errors") for p in range(n)}
        for part, ts in promises(tick.ts, parts, held_times(run.held(), where)).items():
            promised[part] = max(ts, promised.get(part, ts))
        last_tick = tick.ts
    return broken, late


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 2),
    fraction=st.floats(0.0, 0.3),
    delay_ticks=st.integers(1, 12),
    partitions=st.integers(1, 6),
)
def test_no_event_comes_at_or_before_a_time_promised_on_its_partition(
    seed: int, fraction: float, delay_ticks: int, partitions: int
) -> None:
    broken, _ = broken_promises(agents(seed, fraction, delay_ticks), partitions)
    assert broken == 0


def test_late_events_are_held_back_so_a_promise_of_the_tick_alone_would_break() -> None:
    run = agents(0, 0.2, 6)
    broken, late = broken_promises(run, 3)
    assert broken == 0 and late > 0  # events did come after a later tick: the held times mattered
    assert not run.held()  # every held event was sent by the end


def test_a_partition_is_promised_the_tick_or_just_before_its_earliest_held_event() -> None:
    assert promises(1_000, ["a", "b"], {"a": 400}) == {"a": 399, "b": 1_000}
    assert promises(1_000, ["a"], {"a": 2_000}) == {"a": 1_000}


class Meta:
    def __init__(self, topic: str, partition: int, offset: int) -> None:
        self.topic, self.partition, self.offset = topic, partition, offset


class Acked:
    def __init__(self, meta: Meta, is_done: bool = True) -> None:
        self.meta, self.is_done = meta, is_done

    def get(self, timeout: float) -> Meta:
        return self.meta


class Producer:
    """A producer whose broker may be away: ``flush`` then times out, as kafka-python's does."""

    def __init__(self) -> None:
        self.away = False
        self.sent: list[WriterProgress] = []

    def flush(self, timeout: float | None = None) -> None:
        if self.away:
            raise KafkaTimeoutError("flush")

    def partitions_for(self, topic: str) -> set[int]:
        return {0, 1}

    def send(self, topic: str, key: bytes, value: bytes) -> None:
        self.sent.append(decode_progress(value))


def test_a_report_waits_a_bounded_time_for_acknowledgements_and_is_left_to_a_later_one() -> None:
    producer = Producer()
    reporter = ProgressReporter(producer, "sim-1", ["errors"], "progress", writers=["sim-1"])
    reporter.sent(Acked(Meta("errors", 1, 41)))
    producer.away = True
    assert reporter.report(1_000, wait_s=0.01) == [] and producer.sent == []  # no promise before the ack
    producer.away = False
    marks = reporter.report(2_000, {("errors", 0): 1_500}, wait_s=0.01)
    assert [(m.partition, m.through, m.ts, m.writers) for m in marks] == [
        (0, -1, 1_499, ("sim-1",)),  # a late event of 1,500 is still to come there
        (1, 41, 2_000, ("sim-1",)),
    ]
    assert [m.done for m in reporter.finish()] == [True, True]


def test_a_promise_goes_out_without_waiting_once_the_records_before_it_are_acknowledged() -> None:
    producer = Producer()
    reporter = ProgressReporter(producer, "sim-1", ["errors"], "progress", writers=["sim-1"])
    first = Acked(Meta("errors", 0, 7), is_done=False)
    reporter.sent(first)
    assert reporter.promise(1_000) == []  # its record is on its way: nothing promised yet
    first.is_done = True
    second = Acked(Meta("errors", 0, 8), is_done=False)
    reporter.sent(second)
    marks = reporter.promise(2_000)  # the newest promise whose records are all acknowledged
    assert [(m.partition, m.through, m.ts) for m in marks] == [(0, 7, 1_000), (1, -1, 1_000)]
    second.is_done = True
    assert [(m.through, m.ts) for m in reporter.promise(3_000)] == [(8, 3_000), (-1, 3_000)]
