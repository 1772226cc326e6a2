"""A campaign never has more domains with a host out for its change than ``max_parallel_domains``,
whatever put the host out: its own turn, or a change handed over when a repair is verified."""

from __future__ import annotations

from schemas import HostVersionsReported
from streams.core.fleet.lifecycle import FleetState, apply_logged
from streams.core.inventory import Inventory
from streams.core.planning.planner import Planner
from streams.core.policy import load_policy
from streams.trains.campaign import CHANGE
from streams.trains.commands import CampaignSpec, start_record
from tests.streams import factories as f

MINUTE = 60_000
DOMAINS = {"h0": "md0", "g0": "md1"}  # a host a domain: its buffer of one


def inventory() -> Inventory:
    inv = Inventory()
    for host, domain in DOMAINS.items():
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


def changing(state: FleetState) -> set[str]:
    """The domains with a host out for the change."""
    return {
        DOMAINS[h]
        for h, host in state.hosts.items()
        if host.is_out and host.current is not None and host.current.operation == CHANGE
    }


def test_a_change_handed_over_after_a_repair_keeps_the_parallel_limit() -> None:
    policy = load_policy()
    policy = policy.model_copy(update={"trains": policy.trains.model_copy(update={"gate_pct": 100.0})})
    inv, state = inventory(), FleetState()
    planner = Planner(policy, members=inv.hosts_in, view=inv)
    actions = planner.on_finding(
        state, f.finding("h0", action="reboot"), "md0", 1
    )  # md0's only host in repair
    record = start_record(
        CampaignSpec(change="driver=560.35", actor="ana", max_parallel_domains=1), f.START_TS + MINUTE
    )
    apply_logged(state, record)
    camp = state.trains.campaigns[record["payload"]["campaign_id"]]
    seen: list[set[str]] = []
    now = f.START_TS + MINUTE
    while camp.status == "running" and now < f.START_TS + 2 * f.DAY:
        now += 10 * MINUTE
        for host, host_state in state.hosts.items():  # the host side applies a change asked 30 min ago
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
        for domain in ("md0", "md1"):
            actions += planner.reconcile(state, domain, 1, now)
        seen.append(changing(state))
    assert camp.status == "completed"  # every host got the version
    handed = [a for a in actions if a.host_id == "h0" and a.kind == "change_requested"]
    assert [a.reason for a in handed] == ["handed over"]  # md0's change followed its repair
    assert max(len(s) for s in seen) == 1, [s for s in seen if len(s) > 1][:3]
    assert {"md0"} in seen and {"md1"} in seen  # each domain had its turn, one at a time
