"""Change campaigns end to end in the in-process twin: the planner's real fold and decisions, a simulated host side."""

from __future__ import annotations

import pytest

from fleetpulse.trains import Twin, TwinConfig
from producers.changes import ChangeSpec, VersionsSpec
from streams.core.policy import Policy, load_policy
from streams.trains.commands import CampaignSpec, rollback_records, start_record

DAY = 86_400_000
SMALL = TwinConfig(
    clusters=2, domains_per_cluster=3, hosts_per_domain=8, rates={"xid": 1.0, "ecc": 1.0, "link": 0.5}
)
VERSIONS = VersionsSpec(
    changes=[ChangeSpec(version="560.35", rate_factor={"xid": 3.0}), ChangeSpec(version="560.40")]
)


@pytest.fixture(scope="module")
def policy() -> Policy:
    return load_policy()


def start(twin: Twin, change: str, **kw: object) -> str:
    record = start_record(CampaignSpec(change=change, actor="test", **kw), twin.now)  # type: ignore[arg-type]
    twin.record(record)
    return str(record["payload"]["campaign_id"])


def until_not_running(cid: str):  # noqa: ANN201
    return lambda twin: twin.state.trains.campaigns[cid].status != "running"


def test_a_good_change_reaches_every_host_one_domain_buffer_at_a_time(policy: Policy) -> None:
    twin = Twin(policy, SMALL, VERSIONS, seed=3)
    cid = start(twin, "driver=560.40", canary=2)
    report = twin.run(twin.now + 60 * DAY, stop=until_not_running(cid))
    assert twin.state.trains.campaigns[cid].status == "completed"
    assert twin.version_counts("driver") == {"560.40": 48}
    assert max(report.max_change_out.values()) == 1  # each domain's buffer: 10 % of 8 hosts, at least one
    assert report.max_domains_changing == 1
    # every host was visited once, and the canaries were done before any third host was asked
    asked = [a for a in twin.actions if a.kind == "suspected" and a.operation == "change"]
    assert len(asked) == len({a.host_id for a in asked}) == 48
    verified = sorted(a.ts for a in twin.actions if a.kind == "verified" and a.operation == "change")
    assert asked[2].ts >= verified[1]


def test_a_bad_change_halts_before_the_second_domain_and_a_rollback_restores(policy: Policy) -> None:
    twin = Twin(policy, SMALL, VERSIONS, seed=5)
    cid = start(twin, "driver=560.35", canary=2)
    twin.run(twin.now + 60 * DAY, stop=until_not_running(cid))
    camp = twin.state.trains.campaigns[cid]
    assert camp.status == "halted" and camp.halted_reason.startswith("xid:")
    assert "rate ratio" in camp.halted_reason and f"abort {cid} --rollback" in camp.halted_reason
    assert {v.domain for v in camp.visits.values()} == {"c0-md000"}  # never reached the second domain
    changed = camp.changed_hosts()
    assert changed and twin.version_counts("driver")["560.35"] <= len(changed)
    for record in rollback_records(twin.state.trains, cid, actor="test", now_ms=twin.now):
        twin.record(record)
    back = next(c for c in twin.state.trains.campaigns.values() if c.rollback_of == cid)
    assert (back.version, back.hosts) == ("550.54.15", changed)
    twin.run(twin.now + 10 * DAY, stop=until_not_running(back.campaign_id))
    assert back.status == "completed" and camp.status == "aborted"
    assert twin.version_counts("driver") == {"550.54.15": 48}


def test_a_host_in_repair_is_visited_after_its_repair_once_and_never_drained_in_it(policy: Policy) -> None:
    no_gate = policy.model_copy(update={"trains": policy.trains.model_copy(update={"gate_pct": 100.0})})
    roomy = TwinConfig(
        clusters=1, domains_per_cluster=3, hosts_per_domain=20
    )  # a buffer of 2: one for the RMA
    twin = Twin(no_gate, roomy, VERSIONS, seed=7)
    host, cluster, domain = twin.hosts[3]  # in the first domain, past the canaries
    twin._finding(host, cluster, domain, action="rma")  # five days out
    twin.run(twin.now + 3_600_000)
    assert twin.state.hosts[host].current is not None and twin.state.hosts[host].current.operation == "rma"
    # one domain at a time: a domain whose only open visit waits behind a repair holds no slot, so the
    # train goes on during the five days; the change is handed over after the repair, on a turn
    cid = start(twin, "driver=560.40", canary=2)
    report = twin.run(twin.now + 60 * DAY, stop=until_not_running(cid))
    assert twin.state.trains.campaigns[cid].status == "completed"
    assert report.max_domains_changing == 1
    mine = [a for a in twin.actions if a.host_id == host]
    kinds = [(a.operation, a.kind) for a in mine]
    assert kinds.count(("change", "suspected")) == 1 and kinds.count(("change", "change_requested")) == 1
    assert ("change", "drain_requested") not in kinds  # handed over from the repair, never drained in it
    repaired = next(a.ts for a in mine if a.kind == "verified" and a.operation == "rma")
    requested = next(a for a in mine if a.kind == "change_requested")
    assert requested.ts == repaired and requested.reason == "handed over"
    assert kinds.index(("rma", "verified")) < kinds.index(("change", "change_requested"))
    assert ("rma", "returned") not in kinds  # it returned only after its change was verified
    # the train passed the first domain while the host was in repair, and went on to the next
    second = min(
        a.ts for a in twin.actions if a.operation == "change" and a.kind == "suspected" and a.domain != domain
    )
    assert second < repaired


def test_a_change_that_slows_its_hosts_halts_from_their_step_time(policy: Policy) -> None:
    versions = VersionsSpec(changes=[ChangeSpec(version="560.50", slowdown_pct=5.0)])
    twin = Twin(policy, SMALL, versions, seed=7)
    cid = start(twin, "driver=560.50", canary=2)
    twin.run(twin.now + 30 * DAY, stop=until_not_running(cid))
    camp = twin.state.trains.campaigns[cid]
    assert camp.status == "halted" and "step time: +" in camp.halted_reason, camp.halted_reason
    assert {v.domain for v in camp.visits.values()} == {"c0-md000"}
