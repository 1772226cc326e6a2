"""A campaign's timeline: hosts per version over time, hosts out per domain, its halt with the evidence."""

from __future__ import annotations

from fleetpulse.trains import Twin
from streams.core.policy import load_policy
from streams.trains.commands import rollback_records
from streams.trains.timeline import render, steps, timeline
from tests.fleetpulse.trains.test_twin import DAY, SMALL, VERSIONS, start, until_not_running


def test_a_halted_and_rolled_back_campaign_reads_as_its_timeline() -> None:
    twin = Twin(load_policy(), SMALL, VERSIONS, seed=5)
    cid = start(twin, "driver=560.35", canary=2)
    twin.run(twin.now + 60 * DAY, stop=until_not_running(cid))
    camp = twin.state.trains.campaigns[cid]
    changed = camp.changed_hosts()
    for record in rollback_records(twin.state.trains, cid, actor="test", now_ms=twin.now):
        twin.record(record)
    back = next(c for c in twin.state.trains.campaigns.values() if c.rollback_of == cid)
    twin.run(twin.now + 10 * DAY, stop=until_not_running(back.campaign_id))

    points = timeline(twin.state.trains, camp, 3_600_000, twin.now)
    assert points[0].versions == {"550.54.15": len(changed)} and not points[0].out
    peak = max(p.versions.get("560.35", 0) for p in points)
    assert peak == camp.upgraded  # every changed host ran the new version at some point ...
    assert points[-1].versions == {"550.54.15": len(changed)}  # ... and is back on the old one
    assert all(max(p.out.values(), default=0) <= 1 for p in points)  # one domain's buffer at most
    assert {d for p in points for d in p.out} == {"c0-md000"}
    kinds = [s["step"] for s in steps(twin.state.trains, camp)]
    assert kinds[0] == "started" and "campaign_halted" in kinds and kinds[-1] == "campaign_completed"
    text = render(twin.state.trains, camp, points)
    assert "campaign_halted: xid:" in text and "rate ratio" in text and f"{back.campaign_id}  started" in text
