"""Ids the lake holds: a re-derived event sent again under another date is a repeat whatever the gap; source
events keep the recent-rows window."""

from __future__ import annotations

from typing import Any

from analytics.lake.batch import plan_batch
from analytics.lake.reader import Lake
from analytics.lake.stored import StoredIds, rederived_types
from ground.delta import DeltaTables
from ground.settings.lake import ALL_FAMILIES
from schemas import Codec
from tests.analytics.lake.helpers import as_consumed

DAY_MS = 86_400_000


def test_rederived_types_are_the_worker_made_ones() -> None:
    assert "FindingRaised" in rederived_types(ALL_FAMILIES)
    assert "MaintenanceActionRecorded" in rederived_types(ALL_FAMILIES)
    assert not {"HostSampled", "XidRaised", "HostInventoried"} & set(rederived_types(ALL_FAMILIES))
    assert rederived_types(("samples", "errors")) == []


def test_a_finding_on_another_day_after_a_restart_is_a_repeat(
    lake: DeltaTables, publisher_factory: Any, records: list[dict[str, Any]]
) -> None:
    consumed = as_consumed(records)
    publisher_factory().publish(plan_batch(consumed, Codec()))
    found = next(r for r in records if r["event_type"] == "FindingRaised")
    sample = {**next(r for r in records if r["event_type"] == "HostSampled"), "event_id": "ev-new"}
    later = {**found, "ts": found["ts"] + DAY_MS}  # the same finding, decided again a day later

    stored = StoredIds()  # a restarted archiver: nothing recent, the lake read at start
    stored.load(Lake(lake), rederived_types(ALL_FAMILIES))
    assert stored.held == sum(r["event_type"] in rederived_types(ALL_FAMILIES) for r in records)
    start = {(rec.topic, rec.partition): rec.offset + 1 for rec in consumed}
    plan = plan_batch(as_consumed([later, sample], start=start), Codec(), stored=stored)
    assert plan.repeats == 1 and plan.event_ids == {"FindingRaised": set(), "HostSampled": {"ev-new"}}

    stored.stored(plan.event_ids)
    assert ("HostSampled", "ev-new") in stored.recent
    assert ("FindingRaised", found["event_id"]) in stored and ("FindingRaised", "fnd-unseen") not in stored
