"""A lake write refused mid-run (a full disk) is waited out: the archiver resumes from the lake's offsets by itself."""

from __future__ import annotations

import threading
from collections import defaultdict
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from kafka import TopicPartition as KafkaTP

from analytics.lake import archiver as archiver_module
from analytics.lake.archiver import Archiver
from analytics.lake.publish import Publisher
from analytics.lake.reader import Lake
from analytics.lake.records import ConsumedRecord
from ground.errors import LakeStorageError
from ground.settings import Settings
from tests.analytics.lake.helpers import NOW, as_consumed


class Message(NamedTuple):
    topic: str
    partition: int
    offset: int
    timestamp: int | None
    key: bytes | None
    value: bytes | None


class FakeConsumer:
    """Partitions of fixed records; poll hands out what lies past each position."""

    def __init__(self, records: list[ConsumedRecord], topics: list[str]) -> None:
        self.by_tp: dict[KafkaTP, list[Message]] = defaultdict(list)
        for r in records:
            self.by_tp[KafkaTP(r.topic, r.partition)].append(Message(*r))
        self.topics = topics
        self.pos: dict[KafkaTP, int] = {}

    def partitions_for_topic(self, topic: str) -> set[int]:
        return {0, 1}

    def assign(self, tps: list[KafkaTP]) -> None:
        self.pos = dict.fromkeys(tps, 0)

    def beginning_offsets(self, tps: list[KafkaTP]) -> dict[KafkaTP, int]:
        return dict.fromkeys(tps, 0)

    def end_offsets(self, tps: list[KafkaTP]) -> dict[KafkaTP, int]:
        return {tp: len(self.by_tp[tp]) for tp in tps}

    def seek(self, tp: KafkaTP, offset: int) -> None:
        self.pos[tp] = offset

    def position(self, tp: KafkaTP) -> int:
        return self.pos[tp]

    def poll(self, timeout_ms: int = 0, max_records: int = 500) -> dict[KafkaTP, list[Any]]:
        out = {}
        for tp, at in self.pos.items():
            got = self.by_tp[tp][at : at + max_records]
            if got:
                out[tp] = got
                self.pos[tp] = at + len(got)
        return out

    def commit(self, offsets: Any) -> None:
        pass

    def pause(self, *tps: Any) -> None:
        pass

    def resume(self, *tps: Any) -> None:
        pass

    def close(self, autocommit: bool = False) -> None:
        pass


def test_a_refused_write_is_waited_out_and_every_row_lands_once(
    tmp_path: Path, records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings.load().with_section("lake", path=str(tmp_path / "lake"), flush_records=7)
    consumed = as_consumed(records)
    consumer = FakeConsumer(consumed, [])
    refusals = {"left": 2}
    publish = Publisher.publish

    def full_disk(self: Publisher, plan: Any) -> Any:
        if refusals["left"] and plan.records:
            refusals["left"] -= 1
            raise LakeStorageError("cannot append rows: No space left on device (os error 28)")
        return publish(self, plan)

    monkeypatch.setattr(Publisher, "publish", full_disk)
    monkeypatch.setattr(archiver_module, "LAKE_RETRY_S", 0.01, raising=False)
    quality = settings.lake.quality.model_copy(update={"enabled": False})
    settings = settings.with_section("lake", quality=quality)
    stats = Archiver(settings, consumer_factory=lambda **_: consumer, clock=lambda: NOW).run(
        until_idle=True, stop=threading.Event()
    )
    assert refusals["left"] == 0
    lake = Lake(settings.lake.path)
    ids = [
        i
        for t in lake.tables()
        if not t.startswith("_")
        for i in lake.scan(t).select("event_id").collect()["event_id"]
    ]
    assert sorted(ids) == sorted(r["event_id"] for r in records)  # each once
    assert stats.published_rows == len(records)
