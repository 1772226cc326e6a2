"""The fleet that answers the broker: the simulator reads ``fleet.actions`` and the fleet responds.

``BrokerAnswer`` is the ``producers.answer.Answer`` of a simulation run closed loop against a live
pipeline. Before each tick it reads the actions and operators' steps recorded since the last one and
folds them (``response.FleetResponse``). Fast-forward, it first waits until the detect worker has read and
committed everything sent so far (errors, cluster summaries, planner input), so the planner has
answered the past before the fleet moves on: a lockstep, not a race the simulator always wins.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.errors import KafkaError

from fleetpulse.twin.errors import TwinError
from fleetpulse.twin.live_goodput import live_goodput
from fleetpulse.twin.response import FleetResponse
from fleetpulse.twin.settings import TwinSettings
from ground.settings import Settings
from producers.fleet import Fleet
from producers.schedule import Schedule
from schemas import Codec, DecodeError
from streams.topology import consumer_groups

log = logging.getLogger(__name__)
POLL_S = 0.1


@dataclass
class Lockstep:
    """How long to wait for the pipeline before each tick (``None``: do not wait, live pacing).

    ``every``: the fleet waits and answers before every ``every``-th tick only; an action then takes
    effect up to ``every`` ticks after the tick it was decided in (fewer round trips, a slower fleet).
    """

    timeout_s: float | None = 60.0
    every: int = 1
    stop: threading.Event = field(default_factory=threading.Event)  # set: stop waiting (SIGINT, SIGTERM)
    waited_s: float = 0.0
    timeouts: int = 0
    checks: int = 0  # progress checks made (each asks the broker for offsets)
    checks_s: float = 0.0  # time those checks took
    reading_s: float = 0.0  # time spent reading fleet.actions

    def due(self, tick: int) -> bool:
        """Whether the fleet waits and answers before tick ``tick`` (1: the first after the run's start)."""
        return tick % self.every == 0


@dataclass
class BrokerAnswer:
    settings: Settings
    response: FleetResponse
    lockstep: Lockstep = field(default_factory=Lockstep)
    codec: Codec = field(default_factory=Codec)

    def __post_init__(self) -> None:
        f = self.response.fleet
        self.slowdown = (f.slow_factor * f.slow_duty).tolist()  # before a cure zeroes a factor
        s = self.settings
        topic = s.topics.actions.name
        try:
            self.consumer = KafkaConsumer(
                **s.kafka.kafka_python(s.bootstrap_servers), enable_auto_commit=False
            )
            parts = self.consumer.partitions_for_topic(topic) or set()
            self.tps = [TopicPartition(topic, p) for p in sorted(parts)]
            self.consumer.assign(self.tps)
            self.consumer.seek_to_beginning(*self.tps)
        except KafkaError as exc:
            raise TwinError(f"cannot read {topic} at {s.bootstrap_servers}: {exc}") from exc
        topics = consumer_groups(s)[s.detect.app_id]  # errors, cluster summaries, planner input
        try:  # clients kept for the lag checks: new ones per check cost more than the check
            self.group = KafkaConsumer(
                **s.kafka.kafka_python(s.bootstrap_servers),
                group_id=s.detect.app_id,
                enable_auto_commit=False,
            )
            self.admin = KafkaAdminClient(**s.kafka.kafka_python(s.bootstrap_servers))
        except KafkaError as exc:
            raise TwinError(f"cannot reach {s.bootstrap_servers}: {exc}") from exc
        self.watched = topics
        self.watched_tps: list[TopicPartition] = []
        self.reached = 0  # the event time the fleet has reached
        self.ticks = 0  # ticks the fleet has reached

    def until(self, ts: int) -> None:
        self.reached = ts
        self.ticks += 1
        if not self.lockstep.due(self.ticks):
            return
        if self.lockstep.timeout_s is not None:
            self._wait_for_pipeline(self.lockstep.timeout_s)
        t0 = time.monotonic()
        self.response.apply_logged(self._new_records(), until=ts)
        self.lockstep.reading_s += time.monotonic() - t0

    def faults_off(self, host: int, ts: int, lemon: bool) -> bool:
        return self.response.faults_off(host, ts, lemon)

    def report(self, sent: Schedule) -> dict[str, Any]:
        r = self.response
        return {
            **r.report(end_ts=self.reached),
            "jobs": live_goodput(r.fleet, r.settings, r, self.slowdown, sent, self.reached),
            "lockstep_wait_s": round(self.lockstep.waited_s, 1),
            "lockstep_timeouts": self.lockstep.timeouts,
            "lockstep_checks": self.lockstep.checks,
            "lockstep_checks_s": round(self.lockstep.checks_s, 1),
            "actions_reading_s": round(self.lockstep.reading_s, 1),
        }

    def close(self) -> None:
        self.consumer.close()
        self.group.close()
        self.admin.close()

    def _caught_up(self) -> bool:
        """Every record of the watched topics committed by the detect worker (a topic it never read: not yet)."""
        if {tp.topic for tp in self.watched_tps} != set(self.watched):  # internal topics appear once written
            self.watched_tps = [
                TopicPartition(t, p)
                for t in self.watched
                for p in sorted(self.group.partitions_for_topic(t) or ())
            ]
        if not self.watched_tps:
            return True
        group = self.settings.detect.app_id
        try:  # two requests per check: the group's commits in one OffsetFetch, the ends in one ListOffsets
            committed = self.admin.list_group_offsets({group: self.watched_tps}).get(group, {})
            end = self.group.end_offsets(self.watched_tps)
            behind = [tp for tp in self.watched_tps if tp not in committed or committed[tp].offset < end[tp]]
            if not behind:
                return True
            begin = self.group.beginning_offsets(behind)  # an empty partition holds nothing back
            return all(end[tp] <= begin[tp] for tp in behind)
        except KafkaError as exc:
            raise TwinError(f"cannot read the detect worker's progress: {exc}") from exc

    def _wait_for_pipeline(self, timeout_s: float) -> None:
        """Until the detect worker has committed all it was sent, twice in a row (a finding is a second hop)."""
        start = time.monotonic()
        streak = 0
        while streak < 2 and not self.lockstep.stop.is_set():
            if time.monotonic() - start > timeout_s:
                self.lockstep.timeouts += 1
                log.warning("the detect worker did not catch up within %.0f s; the fleet moves on", timeout_s)
                break
            t0 = time.monotonic()
            streak = streak + 1 if self._caught_up() else 0
            self.lockstep.checks += 1
            self.lockstep.checks_s += time.monotonic() - t0
            if streak < 2:
                self.lockstep.stop.wait(POLL_S)
        self.lockstep.waited_s += time.monotonic() - start

    def _new_records(self) -> list[dict[str, Any]]:
        """The records of ``fleet.actions`` since the last read: the planner's actions and operators' steps."""
        if not self.tps:
            return []
        out: list[dict[str, Any]] = []
        end = self.consumer.end_offsets(self.tps)
        while any(self.consumer.position(tp) < end[tp] for tp in self.tps):
            for msgs in self.consumer.poll(timeout_ms=500, max_records=5000).values():
                for m in msgs:
                    try:
                        out.append(self.codec.decode(m.value).record)
                    except DecodeError:
                        continue  # not a record this fleet can answer (the detectors dead-letter bad input)
        return out


@dataclass
class BrokerLoop:
    """The ``producers.answer.AnswerFactory`` of a closed-loop run against the broker; ``close`` after the run."""

    settings: Settings
    twin: TwinSettings
    seed: int
    lockstep: Lockstep
    built: list[BrokerAnswer] = field(default_factory=list)

    def __call__(self, fleet: Fleet) -> BrokerAnswer:
        answer = BrokerAnswer(self.settings, FleetResponse(fleet, self.twin, self.seed), self.lockstep)
        self.built.append(answer)
        return answer

    def close(self) -> None:
        for answer in self.built:
            answer.close()
