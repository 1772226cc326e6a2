"""A change campaign over a small fleet on a real broker: every record crosses Kafka, every decision is the
planner's over the fold it reads back, the host side answers through the agent's and the operators' paths."""

from __future__ import annotations

import pytest

from ground.kafka import admin
from ground.kafka.reading import read_to_end
from ground.settings import Settings
from schemas import Codec, HostInventoried, HostVersionsReported, kafka_key
from streams.core.inventory import Inventory
from streams.core.planning.planner import Planner
from streams.core.policy import load_policy
from streams.trains.campaign import CHANGE
from streams.trains.commands import CampaignSpec, change_applied_record, describe, start_record
from streams.trains.log_io import read_fleet, send_records
from tests.streams.kafka_io import isolated_settings, produce

pytestmark = pytest.mark.integration
CODEC = Codec()
T0 = 1_798_761_600_000
STEP = 10 * 60_000
HOSTS = [
    (f"h{d}{i}", "c1", f"md{d}") for d in range(2) for i in range(4)
]  # two domains of four: a buffer of one


def agent_records(
    ts: int, driver: str, hosts: list[tuple[str, str, str]], *, inventory: bool
) -> list[tuple[str, bytes, bytes]]:
    out = []
    for host, cluster, domain in hosts:
        if inventory:
            inv = HostInventoried(event_id=f"inv-{host}", host_id=host, cluster=cluster, ts=ts, payload={
                "rack": f"{domain}-r", "fabric": "infiniband", "maintenance_domain": domain, "sku": "H100",
                "install_ts": T0 - 86_400_000, "gpu_count": 8, "nic_ports": 8}).to_record()  # fmt: skip
            out.append(("inventory", kafka_key(inv["event_type"], host), CODEC.encode(inv)))
        ver = HostVersionsReported(event_id=f"ver-{host}-{driver}", host_id=host, cluster=cluster, ts=ts,
                                   payload={"driver": driver, "kernel": "5.15.0", "reason": "change", "actor": "agent"}).to_record()  # fmt: skip
        out.append(("inventory", kafka_key(ver["event_type"], host), CODEC.encode(ver)))
    return out


def read_inventory(settings: Settings) -> Inventory:
    inv = Inventory()
    for rec in read_to_end(settings.bootstrap_servers, settings.kafka, settings.topics.inventory.name):
        inv.apply(CODEC.decode(rec.value).record)  # type: ignore[arg-type]
    return inv


def test_a_good_change_completes_on_a_real_broker_one_domain_buffer_at_a_time(kafka) -> None:  # type: ignore[no-untyped-def]
    settings = isolated_settings(kafka.settings, partitions=2)
    admin.create_topics(settings)
    base = load_policy()
    policy = base.model_copy(update={"trains": base.trains.model_copy(update={"burn_in": 30 * 60_000, "gate_soak": 60 * 60_000})})
    try:
        produce(settings, agent_records(T0, "550.54.15", HOSTS, inventory=True))
        start = start_record(CampaignSpec(change="driver=560.35", actor="test", canary=1), T0)
        send_records(settings, [start])
        cid = start["payload"]["campaign_id"]
        now, rounds, most_out, most_domains = T0, 0, 0, 0
        while rounds < 80:
            rounds += 1
            now += STEP
            inventory, state = (
                read_inventory(settings),
                read_fleet(settings),
            )  # what a restarted worker would fold
            camp = state.trains.campaigns[cid]
            if camp.status != "running":
                break
            # the host side: half the hosts' agents report the new driver, the other half's operators record it
            agents, ops = [], []
            for host_id, host in sorted(state.hosts.items()):
                op = host.current
                if op is not None and op.operation == CHANGE and op.phase == "in_repair":
                    if host_id.endswith(("0", "2")):
                        agents += agent_records(
                            now, "560.35", [(host_id, "c1", host.domain)], inventory=False
                        )
                    else:
                        ops.append(
                            change_applied_record(
                                host_id, "driver", "560.35", actor="ops", cluster="c1", now_ms=now
                            )
                        )
            produce(settings, agents)
            send_records(settings, ops)
            inventory = read_inventory(settings)
            planner = Planner(policy, members=inventory.hosts_in, view=inventory)
            actions = []
            for domain, size in inventory.domains().items():
                actions += planner.reconcile(state, domain, size, now)
            send_records(settings, [a.to_record() for a in actions])
            changing = {d: sum(1 for h in state.hosts.values() if h.domain == d and h.current is not None
                               and h.current.operation == CHANGE) for d in inventory.domains()}  # fmt: skip
            most_out = max(most_out, *changing.values())
            most_domains = max(most_domains, sum(n > 0 for n in changing.values()))
        final = read_fleet(settings)
        camp = final.trains.campaigns[cid]
        assert camp.status == "completed", describe(camp)
        assert camp.upgraded == len(HOSTS) and all(v.done_ts is not None for v in camp.visits.values())
        versions = read_inventory(settings)
        reported = {h: max([versions.versions_of(h)["driver"], *filter(None, [final.trains.reported.get(h, {}).get("driver")])],
                           key=lambda r: r[1])[0] for h, _, _ in HOSTS}  # fmt: skip
        assert set(reported.values()) == {"560.35"}
        assert (
            most_out == 1 and most_domains == 1
        )  # at no step more than one domain's buffer out for the change
        assert all(h.current is None for h in final.hosts.values())  # every host returned
    finally:
        admin.delete_topics(settings, [s.name for s in settings.topics.all()])
