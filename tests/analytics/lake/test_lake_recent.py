"""An event delivered again in a later batch is stored once, and a batch the lake refused is not taken as stored."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from analytics.lake import archiver as archiver_module
from analytics.lake.archiver import Archiver
from analytics.lake.batch import plan_batch
from analytics.lake.publish import Publisher
from analytics.lake.reader import Lake
from analytics.lake.recent import RecentIds
from ground.errors import LakeStorageError
from ground.settings import Settings
from schemas import Codec
from tests.analytics.lake.helpers import NOW, as_consumed
from tests.analytics.lake.test_archiver_full_disk import FakeConsumer


def test_a_stored_id_makes_a_later_copy_a_repeat(records: list[dict[str, Any]]) -> None:
    first = plan_batch(as_consumed(records[:5]), Codec())
    recent = RecentIds()
    recent.stored(first.event_ids)
    later = plan_batch(as_consumed([records[2], records[7]]), Codec(), stored=recent)
    assert later.repeats == 1
    assert {i for ids in later.event_ids.values() for i in ids} == {records[7]["event_id"]}


def test_the_window_forgets_the_oldest_ids_first() -> None:
    recent = RecentIds(capacity=3)
    recent.stored({"XidRaised": {"a", "b"}})
    recent.stored({"XidRaised": {"c", "d"}})
    assert len(recent) == 3 and ("XidRaised", "a") not in recent and ("XidRaised", "d") in recent
    assert ("HostSampled", "d") not in recent  # ids are per event type, as the tables are


@pytest.mark.parametrize("refusals", [0, 2])
def test_resends_in_later_batches_land_once(
    refusals: int, tmp_path: Path, records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    resent = records[:6]  # delivered again after the whole run: batches of 7 put them in later batches
    settings = Settings.load().with_section("lake", path=str(tmp_path / "lake"), flush_records=7)
    settings = settings.with_section(
        "lake", quality=settings.lake.quality.model_copy(update={"enabled": False})
    )
    consumer = FakeConsumer(as_consumed(records + resent), [])
    left = {"n": refusals}
    publish = Publisher.publish

    def full_disk(self: Publisher, plan: Any) -> Any:
        if left["n"] and plan.records:
            left["n"] -= 1
            raise LakeStorageError("cannot append rows: No space left on device (os error 28)")
        return publish(self, plan)

    monkeypatch.setattr(Publisher, "publish", full_disk)
    monkeypatch.setattr(archiver_module, "LAKE_RETRY_S", 0.01, raising=False)
    stats = Archiver(settings, consumer_factory=lambda **_: consumer, clock=lambda: NOW).run(
        until_idle=True, stop=threading.Event()
    )
    lake = Lake(settings.lake.path)
    ids = [i for t in lake.tables() for i in lake.scan(t).select("event_id").collect()["event_id"]]
    assert sorted(ids) == sorted(r["event_id"] for r in records)  # each once, none lost to a refused batch
    assert stats.repeats == len(resent) and left["n"] == 0


def test_ids_read_at_a_start_widen_the_window_and_go_first() -> None:
    recent = RecentIds(capacity=2)
    recent.stored({"XidRaised": {"a"}})
    recent.preload([("HostSampled", "p"), ("HostSampled", "q"), ("XidRaised", "a"), ("HostSampled", "r")])
    assert recent.capacity == 4 and len(recent) == 4  # "a" was held already: once
    recent.stored({"HostSampled": {"s"}})
    assert (
        ("XidRaised", "a") not in recent and ("HostSampled", "p") in recent and ("HostSampled", "s") in recent
    )
