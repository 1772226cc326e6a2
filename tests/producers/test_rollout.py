"""A change rolled through the simulated fleet: hosts report it on their domain's day, a bad one acts on them."""

from __future__ import annotations

import math

import numpy as np

from producers.changes import KIND_CLASS, ChangeSpec, RolloutSpec, VersionsSpec
from producers.fleet import build_fleet
from producers.rollout import applied, change_schedule, kind_rates
from tests.producers.conftest import START, config_with

DAY = 86_400_000
BAD = ChangeSpec(component="driver", version="560.35", rate_factor={"xid": 3.0}, delay_s=3600)
SLOW = ChangeSpec(component="driver", version="560.50", slowdown_pct=10.0)
GOOD = ChangeSpec(component="driver", version="560.40")


def versions(version: str, **rollout: object) -> dict[str, object]:
    spec = VersionsSpec(
        report=True, changes=[BAD, SLOW, GOOD], rollouts=[RolloutSpec(version=version, **rollout)]
    )  # type: ignore[arg-type]
    return spec.model_dump()


def test_hosts_report_the_version_on_their_domains_turn_and_the_truth_says_it_is_bad(simulate) -> None:  # type: ignore[no-untyped-def]
    fleet = config_with("small", versions=versions("560.35", start_day=1, domains_per_day=4))
    result, sink = simulate(days=3, interval_s=3600, fleet=fleet)
    changed = [
        r
        for r in sink.records
        if r["event_type"] == "HostVersionsReported" and r["payload"]["reason"] == "change"
    ]
    domain = {
        r["host_id"]: r["payload"]["maintenance_domain"]
        for r in sink.records
        if r["event_type"] == "HostInventoried"
    }
    assert changed and {r["payload"]["driver"] for r in changed} == {"560.35"}
    assert {r["host_id"] for r in changed} == set(domain)  # every domain's turn fell inside the run
    first = {}
    for r in changed:
        first.setdefault(domain[r["host_id"]], r["ts"])
    turns = sorted(first.items())
    assert [ts for _, ts in turns] == [
        START + DAY + i * DAY // 4 for i in range(len(turns))
    ]  # name order, 4 a day
    [truth] = result.manifest["rollouts"]
    assert truth["verdict"] == "bad" and truth["hosts"] == len(domain)
    assert [c["verdict"] for c in result.manifest["changes"]] == ["bad", "bad", "good"]


def test_a_bad_version_raises_only_its_classes_by_its_factor_after_its_delay() -> None:
    cfg = config_with("small", versions=versions("560.35"))
    cfg = cfg.model_copy(
        update={"failures": cfg.failures.model_copy(update={"interruptions_per_gpu_day": 0.05})}
    )
    fleet = build_fleet(cfg, 7, START, START + 60 * DAY)
    turns = applied(fleet)
    extra = change_schedule(fleet, turns)
    assert len(extra) and {KIND_CLASS[k] for k in extra.kind} == {"xid"} and set(extra.phase) == {"change"}
    since = dict(zip(turns.host.tolist(), (turns.ts + 3_600_000).tolist(), strict=True))
    assert all(ts >= since[h] for h, ts in zip(extra.host.tolist(), extra.ts.tolist(), strict=True))
    # (factor - 1) times the xid kinds' base rate, over the hosts' days on it: within four standard deviations
    xid = sum(r for k, r in kind_rates(cfg).items() if KIND_CLASS.get(k) == "xid")
    expected = 2.0 * xid * sum((fleet.end_ts - t) / DAY for t in since.values())
    assert abs(len(extra) - expected) < 4 * math.sqrt(expected), (len(extra), expected)


def test_a_good_version_adds_nothing_and_a_slow_one_only_slows(simulate) -> None:  # type: ignore[no-untyped-def]
    good = build_fleet(config_with("small", versions=versions("560.40")), 7, START, START + 30 * DAY)
    assert len(applied(good)) and not len(change_schedule(good))
    base, base_sink = simulate(days=2, interval_s=3600, fleet=config_with("small"))
    slow_cfg = config_with("small", versions=versions("560.50", start_day=1))
    slow, slow_sink = simulate(days=2, interval_s=3600, fleet=slow_cfg)
    turns = applied(build_fleet(slow_cfg, slow.manifest["seed"], START, slow.end_ts))
    host_id = build_fleet(slow_cfg, slow.manifest["seed"], START, slow.end_ts).host_id
    turn = {host_id[h]: t for h, t in zip(turns.host.tolist(), turns.ts.tolist(), strict=True)}

    def steps(sink) -> dict[tuple[str, int], float]:  # type: ignore[no-untyped-def]
        return {
            (r["host_id"], r["ts"]): r["payload"]["step_time_ms"]
            for r in sink.records
            if r["event_type"] == "HostSampled" and r["payload"]["step_time_ms"] is not None
        }

    before, after = steps(base_sink), steps(slow_sink)
    ratio = np.array([after[k] / before[k] for k in before if k in after])
    late = np.array([k[0] in turn and k[1] >= turn[k[0]] for k in before if k in after])
    assert late.any() and not late.all()  # the first domain had it on day 1, the last not yet
    assert np.allclose(ratio[late], 1.10) and np.allclose(ratio[~late], 1.0)
    assert not len(
        change_schedule(build_fleet(config_with("small", versions=versions("560.50")), 7, START, START + DAY))
    )
