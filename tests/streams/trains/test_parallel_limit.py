"""A campaign never has more domains with a host out for its change than ``max_parallel_domains``,
whatever put the host out: its own turn, or a change handed over when a repair is verified; and a
domain whose only open visit waits behind a repair holds no slot, so a long repair does not hold the
train."""

from __future__ import annotations

from schemas import HostVersionsReported
from streams.core.actions import Action
from streams.core.fleet.lifecycle import FleetState, apply_logged
from streams.core.inventory import Inventory
from streams.core.planning.planner import Planner
from streams.core.policy import load_policy
from streams.trains.campaign import CHANGE, Campaign
from streams.trains.commands import CampaignSpec, start_record, step_record
from tests.streams import factories as f

MINUTE = 60_000
HOUR = 60 * MINUTE
DOMAINS = {"h0": "md0", "g0": "md1"}  # a host a domain: its buffer of one


def inventory(domains: dict[str, str]) -> Inventory:
    inv = Inventory()
    for host, domain in domains.items():
        inv.apply(
            {
                "event_type": "HostInventoried",
                "host_id": host,
                "cluster": "c0",
                "ts": f.START_TS,
                "payload": {
                    "rack": "r",
                    "maintenance_domain": domain,
                    "fabric": "ib",
                    "install_ts": 0,
                    "gpu_count": 8,
                },
            }
        )
    return inv


def changing(state: FleetState, domains: dict[str, str]) -> set[str]:
    """The domains with a host out for the change."""
    return {
        domains[h]
        for h, host in state.hosts.items()
        if host.is_out and host.current is not None and host.current.operation == CHANGE
    }


def planner_over(inv: Inventory) -> Planner:
    policy = load_policy()
    policy = policy.model_copy(update={"trains": policy.trains.model_copy(update={"gate_pct": 100.0})})
    return Planner(policy, members=inv.hosts_in, view=inv)


def start(state: FleetState, now: int) -> Campaign:
    record = start_record(CampaignSpec(change="driver=560.35", actor="ana", max_parallel_domains=1), now)
    apply_logged(state, record)
    return state.trains.campaigns[record["payload"]["campaign_id"]]


def drive(
    planner: Planner, inv: Inventory, state: FleetState, camp: Campaign, now: int, until: int
) -> tuple[list[Action], list[set[str]]]:
    """Ten-minute steps until the campaign stops or ``until``: the host side applies a change asked 30 min
    ago, then every domain is reconciled. The actions, and the domains changing after each step."""
    domains = {h: inv.domain_of(h) for h in inv.hosts}
    actions: list[Action] = []
    seen: list[set[str]] = []
    while camp.status == "running" and now < until:
        now += 10 * MINUTE
        for host, host_state in state.hosts.items():
            op = host_state.current
            asked = (
                op.started_ts
                if op is not None and op.operation == CHANGE and op.phase == "in_repair"
                else None
            )
            if asked is not None and now - asked >= 30 * MINUTE:
                inv.apply(
                    {
                        "event_id": f"v-{host}",
                        "event_type": HostVersionsReported.EVENT_TYPE,
                        "host_id": host,
                        "cluster": "c0",
                        "ts": now,
                        "payload": {"driver": "560.35", "reason": "change", "actor": "agent"},
                    }
                )
        for domain in sorted(set(domains.values())):
            actions += planner.reconcile(state, domain, len(inv.hosts_in(domain)), now)
        seen.append(changing(state, domains))
    return actions, seen


def test_a_change_handed_over_after_a_repair_keeps_the_parallel_limit() -> None:
    inv, state = inventory(DOMAINS), FleetState()
    planner = planner_over(inv)
    actions = planner.on_finding(
        state, f.finding("h0", action="reboot"), "md0", 1
    )  # md0's only host in repair
    camp = start(state, f.START_TS + MINUTE)
    more, seen = drive(planner, inv, state, camp, f.START_TS + MINUTE, f.START_TS + 2 * f.DAY)
    actions += more
    assert camp.status == "completed"  # every host got the version
    handed = [a for a in actions if a.host_id == "h0" and a.kind == "change_requested"]
    assert [a.reason for a in handed] == ["handed over"]  # md0's change followed its repair
    assert max(len(s) for s in seen) == 1, [s for s in seen if len(s) > 1][:3]
    assert {"md0"} in seen and {"md1"} in seen  # each domain had its turn, one at a time


def test_a_long_repair_does_not_hold_the_train_and_the_repaired_host_waits_for_a_turn() -> None:
    domains = {"h0": "md0", "g0": "md1", "g1": "md1", "g2": "md1"}
    inv, state = inventory(domains), FleetState()
    planner = planner_over(inv)
    actions = planner.on_finding(state, f.finding("h0"), "md0", 1)  # an RMA: days out
    rma = state.hosts["h0"].current
    assert rma is not None and rma.operation == "rma" and rma.started_ts is not None
    ends = rma.started_ts + planner.repair_time_ms(state, rma)
    assert ends - f.START_TS >= 2 * f.DAY
    # the campaign starts 4 h before the RMA ends: md1's three hosts take longer (30 min + 2 h burn-in each)
    camp = start(state, ends - 4 * HOUR)
    more, seen = drive(planner, inv, state, camp, ends - 4 * HOUR, ends + 2 * f.DAY)
    actions += more
    assert camp.status == "completed"
    mine = [(a.operation, a.kind, a.ts) for a in actions if a.host_id == "h0"]
    repaired = next(ts for op, kind, ts in mine if (op, kind) == ("rma", "verified"))
    assert repaired == ends
    # the train did not wait for md0's RMA: md1 changed during it
    md1 = [a for a in actions if a.operation == CHANGE and a.domain == "md1"]
    assert min(a.ts for a in md1 if a.kind == "change_requested") < repaired
    # at the RMA's end md1 had a host out for the change: h0 stayed out, and its change was handed over
    # (never drained, never returned in between) at the first free slot, md1 going on after it
    free = min(a.ts for a in md1 if a.kind == "verified" and a.ts > repaired)
    handed = next(a for a in actions if a.host_id == "h0" and a.kind == "change_requested")
    assert handed.reason == "handed over" and free <= handed.ts <= free + 10 * MINUTE
    done = next(a.ts for a in actions if a.host_id == "h0" and a.kind == "verified" and a.operation == CHANGE)
    assert any(a.kind == "change_requested" and a.ts >= done for a in md1)
    kinds = [(op, kind) for op, kind, _ in mine]
    assert ("change", "drain_requested") not in kinds and ("rma", "returned") not in kinds
    assert kinds.count(("change", "deferred")) == 1  # waiting for its turn, on the log
    assert max(len(s) for s in seen) == 1, [s for s in seen if len(s) > 1][:3]
    assert {"md0"} in seen and {"md1"} in seen


def test_a_repaired_host_held_for_its_turn_returns_while_its_campaign_is_paused() -> None:
    domains = {"h0": "md0", "g0": "md1", "g1": "md1"}
    inv, state = inventory(domains), FleetState()
    planner = planner_over(inv)
    actions = planner.on_finding(state, f.finding("h0", action="reboot"), "md0", 1)
    reboot = state.hosts["h0"].current
    assert reboot is not None and reboot.started_ts is not None
    ends = reboot.started_ts + planner.repair_time_ms(state, reboot)
    camp = start(state, f.START_TS + MINUTE)
    # md1 has the turn when the reboot ends: h0 is kept out for its change
    actions += drive(planner, inv, state, camp, f.START_TS + MINUTE, ends + 10 * MINUTE)[0]
    h0 = state.hosts["h0"]
    assert h0.current is reboot and reboot.phase == "verified" and changing(state, domains) == {"md1"}
    now = ends + 20 * MINUTE
    apply_logged(state, step_record(state.trains, camp.campaign_id, "paused", actor="ana", now_ms=now))
    for domain in ("md0", "md1"):
        actions += planner.reconcile(state, domain, len(inv.hosts_in(domain)), now)
    assert h0.current is None and [op.phase for op in h0.waiting] == ["deferred"]  # back in service
    apply_logged(state, step_record(state.trains, camp.campaign_id, "resumed", actor="ana", now_ms=now))
    more, seen = drive(planner, inv, state, camp, now, now + 2 * f.DAY)
    actions += more
    assert camp.status == "completed" and max(len(s) for s in seen) == 1
    kinds = [(a.operation, a.kind) for a in actions if a.host_id == "h0"]
    assert kinds.index(("reboot", "returned")) < kinds.index(("change", "drain_requested"))  # drained later
