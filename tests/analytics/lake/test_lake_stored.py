"""Ids the lake holds: a re-derived event sent again under another date is a repeat whatever the gap; source
events keep the recent-rows window."""

from __future__ import annotations

from typing import Any

from analytics.lake.batch import plan_batch
from analytics.lake.reader import Lake
from analytics.lake.stored import StoredIds, rederived_types, stamped_types
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


def test_a_sample_resent_after_a_restart_is_a_repeat_within_the_resend_window(
    lake: DeltaTables, publisher_factory: Any, records: list[dict[str, Any]]
) -> None:
    consumed = as_consumed(records)
    publisher_factory().publish(plan_batch(consumed, Codec()))
    samples = sorted((r for r in records if r["event_type"] == "HostSampled"), key=lambda r: r["ts"])
    newest, oldest = samples[-1], samples[0]
    window_ms = newest["ts"] - samples[1]["ts"]  # every sample but the oldest

    stored = StoredIds()  # a restarted archiver: the lake's recent rows read at start
    stored.load(Lake(lake), [], stamped_types(ALL_FAMILIES), window_ms=window_ms)
    assert ("HostSampled", newest["event_id"]) in stored and ("HostSampled", oldest["event_id"]) not in stored
    assert len(stored.recent) == sum(  # each table's rows within the window of its own newest
        r["event_type"] not in rederived_types(ALL_FAMILIES)
        and r["ts"] >= max(x["ts"] for x in records if x["event_type"] == r["event_type"]) - window_ms
        for r in records
    )
    start = {(rec.topic, rec.partition): rec.offset + 1 for rec in consumed}
    plan = plan_batch(as_consumed([newest, samples[1]], start=start), Codec(), stored=stored)
    assert plan.repeats == 2 and plan.event_ids == {"HostSampled": set()}


def test_no_window_reads_no_stamped_ids(
    lake: DeltaTables, publisher_factory: Any, records: list[dict[str, Any]]
) -> None:
    publisher_factory().publish(plan_batch(as_consumed(records), Codec()))
    stored = StoredIds()
    stored.load(Lake(lake), [], stamped_types(ALL_FAMILIES), window_ms=0)
    assert len(stored.recent) == 0
    assert stamped_types(("samples",)) == ["HostSampled"]
