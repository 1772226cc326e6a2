"""The campaigns job: hosts per version and hosts out per domain over time, halts with their evidence."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from analytics.jobs import campaigns as c
from analytics.jobs import run_job
from analytics.jobs.campaign_halts import halts
from fleetpulse.trains import Twin
from ground.halt_evidence import ROLLBACK, class_evidence, parse_evidence, step_evidence
from streams.core.policy import load_policy
from streams.trains.timeline import timeline
from tests.analytics.jobs.campaign_lake import halted_and_rolled_back, write_twin_lake
from tests.fleetpulse.trains.test_twin import DAY, SMALL, VERSIONS

HOUR = 3_600_000


def _campaign(cid: str, kind: str, ts: int, **kw: Any) -> dict[str, Any]:
    return {
        "ts": ts,
        "campaign_id": cid,
        "kind": kind,
        "component": "driver",
        "version": "2",
        "scope": [],
        "hosts": [],
        "max_parallel_domains": 2,
        "rollback_of": None,
        "reason": "",
    } | kw


def _action(host: str, kind: str, ts: int, domain: str = "-", reason: str = "") -> dict[str, Any]:
    return {
        "ts": ts,
        "host_id": host,
        "kind": kind,
        "operation": "change",
        "finding_id": "c1",
        "maintenance_domain": domain,
        "rule": "1",
        "reason": reason,
    }


def _visit(host: str, domain: str, requested: int, applied: int, done: int) -> list[dict[str, Any]]:
    return [
        _action(host, "suspected", requested, domain),
        _action(host, "change_requested", requested, domain),
        _action(host, "change_applied", applied, domain),
        _action(host, "verified", done, domain),
    ]


EVIDENCE = class_evidence("xid", (9, 2.0), (10, 20.0), (9.0, 3.5, 23.0), 6.1, 5.9)
STEPS = step_evidence((12.5, 4.0, 21.0), 7, 6.0, 5.9)


def hand_built() -> dict[str, pl.DataFrame]:
    """Three hosts in two domains of two: d1's two hosts one after the other (a swap at t=30 is no peak),
    d2's host while d1's second is out (two domains at once), then a halt on two tests."""
    actions = [
        *_visit("h1", "d1", 10, 20, 30),
        *_visit("h2", "d1", 30, 40, 50),
        *_visit("h3", "d2", 35, 45, 60),
        _action("-", "campaign_halted", 55, reason=f"{EVIDENCE}; {STEPS}{ROLLBACK}fleetpulse train abort c1"),
    ]
    inventory = {
        "host_id": ["h1", "h2", "h3", "h4"],
        "cluster": "c",
        "maintenance_domain": ["d1", "d1", "d2", "d2"],
    }
    return {
        "campaigns": pl.DataFrame([_campaign("c1", "started", 0)]),
        "actions": pl.DataFrame(actions),
        "inventory": pl.DataFrame(inventory),
    }


def test_hand_built_actions_give_each_version_domain_and_halt() -> None:
    t = {k: v.lazy() for k, v in hand_built().items()}
    started, visits, steps = (
        c.started(t["campaigns"]),
        c.visits(t["actions"]),
        c.steps(t["campaigns"], t["actions"]),
    )
    versions = c.versions_over_time(started, visits).collect()
    at = {(ts, v): n for _, ts, v, n in versions.iter_rows()}
    assert [at[(ts, "1")] for ts in (0, 20, 40, 45)] == [3, 2, 1, 0]
    assert [at[(ts, "2")] for ts in (20, 40, 45)] == [1, 2, 3]
    out = c.out_over_time(visits).collect()
    d1 = out.filter(pl.col("domain") == "d1")
    assert d1.select("ts", "out").rows() == [(10, 1), (30, 1), (50, 0)]
    assert c.domains_over_time(out.lazy()).collect().select("ts", "domains").rows() == [
        (10, 1),
        (35, 2),
        (50, 1),
        (60, 0),
    ]
    buffers = c.domain_buffers(t["inventory"], 50.0)
    table = c.campaign_table(started, steps, visits, out.lazy(), buffers, c.in_scope(started, t["inventory"]))
    (row,) = table.collect().to_dicts()
    assert row["state"] == "halted" and row["change"] == "driver=2"
    assert (row["hosts_done"], row["hosts_changed"], row["hosts_total"]) == (3, 3, 4)
    assert (row["max_domains_at_once"], row["max_out"], row["buffer"], row["domains_over_buffer"]) == (
        2,
        1,
        1,
        0,
    )
    assert row["halts"] == 1 and row["halt_evidence"] == f"{EVIDENCE}; {STEPS}"
    xid, step = halts(steps).collect().to_dicts()
    assert (xid["test"], xid["effect_unit"], xid["new_count"], xid["new_host_days"], xid["new_rate"]) == (
        "xid",
        "rate ratio",
        9.0,
        2.0,
        4.5,
    )
    assert (xid["old_count"], xid["old_rate"], xid["effect"], xid["effect_lo"], xid["effect_hi"]) == (
        10.0,
        0.5,
        9.0,
        3.5,
        23.0,
    )
    assert (step["test"], step["effect"], step["effect_lo"], step["windows"], step["llr"]) == (
        "step time",
        12.5,
        4.0,
        7.0,
        6.0,
    )


def test_a_second_host_out_in_a_domain_goes_past_its_buffer() -> None:
    t = hand_built()
    late = pl.DataFrame(_visit("h4", "d2", 36, 46, 58))
    actions = pl.concat([t["actions"], late.select(t["actions"].columns)]).lazy()
    started, visits = c.started(t["campaigns"].lazy()), c.visits(actions)
    out = c.out_over_time(visits)
    table = c.campaign_table(
        started,
        c.steps(t["campaigns"].lazy(), actions),
        visits,
        out,
        c.domain_buffers(t["inventory"].lazy(), 50.0),
        c.in_scope(started, t["inventory"].lazy()),
    ).collect()
    assert table.select("max_out", "buffer", "max_out_domain", "domains_over_buffer").row(0) == (
        2,
        1,
        "d2",
        1,
    )


@pytest.fixture(scope="module")
def twin_lake(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Twin, str]:
    twin, cid, people = halted_and_rolled_back()
    lake = tmp_path_factory.mktemp("campaign-lake")
    write_twin_lake(lake, twin, people)
    return lake, twin, cid


def _at(series: pl.DataFrame, ts: int, key: str, value: str) -> dict[str, int]:
    """Each ``key``'s ``value`` at ``ts`` from a step series (its last row at or before ``ts``)."""
    seen = series.filter(pl.col("ts") <= ts).sort("ts").group_by(key).agg(pl.col(value).last())
    return {k: n for k, n in seen.iter_rows() if n}


def test_the_lake_timeline_is_the_planners_fold_at_every_hour(twin_lake: tuple[Path, Twin, str]) -> None:
    lake, twin, cid = twin_lake
    result = run_job("campaigns", lake)
    trains = twin.state.trains
    camp = trains.campaigns[cid]
    versions = result.tables["versions"].filter(pl.col("campaign_id") == cid)
    out = result.tables["out"]
    points = timeline(trains, camp, HOUR, twin.now)
    assert len(points) > 24
    for p in points:
        assert _at(versions, p.ts, "version", "hosts") == {v: n for v, n in p.versions.items() if n}, p.ts
        both: Counter[str] = Counter()
        for k in trains.campaigns:  # the campaign and its rollback
            both.update(_at(out.filter(pl.col("campaign_id") == k), p.ts, "domain", "out"))
        assert dict(both) == {d: n for d, n in p.out.items() if n}, p.ts
    table = {r["campaign_id"]: r for r in result.tables["campaigns"].to_dicts()}
    assert {k: r["state"] for k, r in table.items()} == {k: v.status for k, v in trains.campaigns.items()}
    for k, v in trains.campaigns.items():
        assert table[k]["hosts_done"] == sum(x.done_ts is not None for x in v.visits.values())
        assert table[k]["max_out"] <= table[k]["buffer"] == 1 and table[k]["max_domains_at_once"] == 1
    assert table[cid]["halts"] == 1 and table[cid]["halt_evidence"] == camp.halted_reason.split(ROLLBACK)[0]
    (xid,) = result.tables["halts"].to_dicts()
    (expected,) = parse_evidence(camp.halted_reason)
    assert {k: xid[k.replace("exposure", "host_days")] for k in expected} == expected
    assert result.summary["campaigns"] == 2 and result.summary["halts"] == 1


def test_a_lake_without_campaigns_says_so_with_empty_tables(tmp_path: Path) -> None:
    twin = Twin(load_policy(), SMALL, VERSIONS, seed=5)
    twin.run(twin.now + DAY)  # no campaign: its planner's actions, if any, are repairs
    write_twin_lake(tmp_path, twin, [])
    result = run_job("campaigns", tmp_path)
    assert result.summary["campaigns"] == 0 and result.tables["campaigns"].is_empty()
    assert {"campaign_id", "test", "effect"} <= set(result.tables["halts"].columns) and not result.notes
