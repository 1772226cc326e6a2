"""A finding a detector raises again (same id, another ``ts``, so another date partition) after the archiver
restarted is stored once, on a real broker and a real Delta lake, and ``lake validate`` passes."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from analytics.lake import Archiver, Lake
from analytics.quality.gate import QualityGate
from analytics.quality.recheck import recheck
from schemas import FindingRaised
from tests.conftest import KafkaCluster
from tests.integration.test_archiver import fleet_topics, produce, settings_for  # noqa: F401 (a fixture)

pytestmark = pytest.mark.integration
DAY_MS = 86_400_000


def finding(event_id: str, ts: int, host: str = "host-0001") -> dict[str, Any]:
    """A slow-host finding as the detector sends it: the id is fixed by the episode, ``ts`` by the window it fired in."""
    return FindingRaised(
        event_id=event_id,
        host_id=host,
        cluster="rsc1",
        ts=ts,
        payload={
            "finding_id": event_id,
            "detector": "slow_host",
            "rule": "slow_host",
            "scope": "host",
            "scope_key": host,
            "error_class": "slow_host",
            "count": 3,
            "window_start": ts - 900_000,
            "window_end": ts,
            "recommended_action": "drain",
            "severity": "warning",
            "score": 4.2,
            "evidence": {},
        },
    ).to_record()


def test_a_finding_raised_again_on_another_day_is_stored_once(
    kafka: KafkaCluster,
    fleet_topics: dict[str, str],  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
) -> None:
    lake = tmp_path / "lake"
    settings = settings_for(kafka, fleet_topics, lake)
    day = int(dt.datetime.now(dt.UTC).replace(hour=12, minute=0, second=0, microsecond=0).timestamp() * 1000)
    first = [finding("fnd-once", day - 2 * DAY_MS), finding("fnd-other", day - 2 * DAY_MS, "host-0002")]
    produce(kafka, fleet_topics, first)
    assert Archiver(settings).run(until_idle=True, max_seconds=60).published_rows == 2

    # the detector restarted, re-decided the episode on a later window: the id it had, the next day's ts
    produce(kafka, fleet_topics, [finding("fnd-once", day - DAY_MS), finding("fnd-new", day - DAY_MS)])
    again = Archiver(settings).run(until_idle=True, max_seconds=60)
    assert (again.records, again.published_rows, again.repeats) == (2, 1, 1)

    rows = Lake(lake).scan("finding_raised").select("event_id", "date").collect()
    assert sorted(rows["event_id"].to_list()) == ["fnd-new", "fnd-once", "fnd-other"]
    checks = recheck(Lake(lake), QualityGate(), dt.datetime.now(dt.UTC), tables=["finding_raised"])
    assert checks and all(c.success for c in checks), [c for c in checks if not c.success]
