"""A lake holding change campaigns as the archiver writes them: the trains twin's planner decides, and its
campaign records, change actions and inventory land in the lake's tables."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from fleetpulse.trains import Twin
from schemas import HostInventoried
from schemas.arrow import flatten
from streams.core.policy import load_policy
from streams.trains.commands import CampaignSpec, rollback_records, start_record
from tests.analytics.jobs.factories import write_table
from tests.fleetpulse.trains.test_twin import DAY, SMALL, VERSIONS, until_not_running


def write_records(lake: Path, table: str, records: Iterable[Mapping[str, Any]]) -> None:
    rows = [flatten(r) for r in records]
    if not rows:
        return  # no such table in the lake
    write_table(lake, table, pl.DataFrame(rows, infer_schema_length=None))


def halted_and_rolled_back(seed: int = 5) -> tuple[Twin, str, list[dict[str, Any]]]:
    """A ×3-XID change halted in its first domain, then rolled back; the campaign records people wrote."""
    twin = Twin(load_policy(), SMALL, VERSIONS, seed=seed)
    people = [start_record(CampaignSpec(change="driver=560.35", actor="test", canary=2), twin.now)]
    twin.record(people[0])
    cid = str(people[0]["payload"]["campaign_id"])
    twin.run(twin.now + 60 * DAY, stop=until_not_running(cid))
    back = rollback_records(twin.state.trains, cid, actor="test", now_ms=twin.now)
    for record in back:
        twin.record(record)
        people.append(record)
    rollback = next(c for c in twin.state.trains.campaigns.values() if c.rollback_of == cid)
    twin.run(twin.now + 10 * DAY, stop=until_not_running(rollback.campaign_id))
    return twin, cid, people


def write_twin_lake(lake: Path, twin: Twin, people: list[dict[str, Any]]) -> None:
    """The twin's fleet as the lake would hold it: inventory, campaign records, every planner action."""
    inventory = [
        HostInventoried(
            event_id=f"inv-{host}",
            host_id=host,
            cluster=cluster,
            ts=twin.config.start_ts,
            payload={
                "rack": "r0",
                "fabric": "ib",
                "maintenance_domain": domain,
                "sku": "h100",
                "gpu_count": 8,
            },
        ).to_record()
        for host, cluster, domain in twin.hosts
    ]
    write_records(lake, "host_inventoried", inventory)
    write_records(lake, "campaigns", people)
    write_records(lake, "maintenance_action_recorded", [a.to_record() for a in twin.actions])
