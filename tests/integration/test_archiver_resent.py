"""A sample and an error an agent resends (same event id, same ``ts``) after the archiver restarted are stored
once, on a real broker and a real Delta lake: the restart reads back the ids of the resend window."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from analytics.lake import Archiver, Lake
from analytics.lake.synthetic import HOUR_MS, synthetic_records
from analytics.quality.gate import QualityGate
from analytics.quality.recheck import recheck
from tests.conftest import KafkaCluster
from tests.integration.test_archiver import fleet_topics, produce, settings_for  # noqa: F401 (a fixture)

pytestmark = pytest.mark.integration
STAMPED = {"HostInventoried", "HostSampled", "XidRaised", "EccErrorObserved"}


def test_a_sample_resent_across_a_restart_is_stored_once(
    kafka: KafkaCluster,
    fleet_topics: dict[str, str],  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
) -> None:
    lake = tmp_path / "lake"
    settings = settings_for(kafka, fleet_topics, lake)
    now = int(dt.datetime.now(dt.UTC).timestamp() * 1000)
    records = [
        r
        for r in synthetic_records(n_hosts=2, samples_per_host=3, start_ms=now - 2 * HOUR_MS, span_ms=HOUR_MS)
        if r["event_type"] in STAMPED
    ]
    produce(kafka, fleet_topics, records)
    assert Archiver(settings).run(until_idle=True, max_seconds=60).published_rows == len(records)

    # the agent's batch was acknowledged but not taken off its spool: the newest sample and an error come again
    samples = sorted((r for r in records if r["event_type"] == "HostSampled"), key=lambda r: r["ts"])
    error = max((r for r in records if r["event_type"] == "XidRaised"), key=lambda r: r["ts"])
    fresh = {**samples[-1], "event_id": "ev-fresh", "ts": samples[-1]["ts"] + 10_000}
    produce(kafka, fleet_topics, [samples[-1], error, fresh])
    again = Archiver(settings).run(until_idle=True, max_seconds=60)
    assert (again.records, again.published_rows, again.repeats) == (3, 1, 2)

    reader = Lake(lake)
    ids = reader.scan("host_sampled").select("event_id").collect().get_column("event_id").to_list()
    assert sorted(ids) == sorted([*(r["event_id"] for r in samples), "ev-fresh"])
    tables = ["host_sampled", "xid_raised", "ecc_error_observed"]
    checks = recheck(reader, QualityGate(), dt.datetime.now(dt.UTC), tables=tables)
    assert checks and all(c.success for c in checks), [c for c in checks if not c.success]
