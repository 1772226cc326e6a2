"""A change campaign over a small fleet on a real broker: every record crosses Kafka, every decision is the
planner's over the fold it reads back, the host side answers through the agent's and the operators' paths."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from ground.kafka import admin
from ground.kafka.reading import read_to_end
from ground.settings import Settings
from schemas import Codec, HostInventoried, HostVersionsReported, XidRaised, kafka_key
from streams.core.inventory import Inventory
from streams.core.planning.planner import Planner
from streams.core.policy import load_policy
from streams.trains.campaign import CHANGE
from streams.trains.commands import CampaignSpec, change_applied_record, describe, start_record
from streams.trains.log_io import read_fleet, send_records
from streams.worker import WorkerProcess, spawn_worker
from tests.conftest import free_ports
from tests.streams.kafka_io import decoded, isolated_settings, produce, wait_for

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
            inv = HostInventoried(
                event_id=f"inv-{host}",
                host_id=host,
                cluster=cluster,
                ts=ts,
                payload={
                    "rack": f"{domain}-r",
                    "fabric": "infiniband",
                    "maintenance_domain": domain,
                    "sku": "H100",
                    "install_ts": T0 - 86_400_000,
                    "gpu_count": 8,
                    "nic_ports": 8,
                },
            ).to_record()
            out.append(("inventory", kafka_key(inv["event_type"], host), CODEC.encode(inv)))
        ver = HostVersionsReported(
            event_id=f"ver-{host}-{driver}",
            host_id=host,
            cluster=cluster,
            ts=ts,
            payload={"driver": driver, "kernel": "5.15.0", "reason": "change", "actor": "agent"},
        ).to_record()
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
    policy = base.model_copy(
        update={"trains": base.trains.model_copy(update={"burn_in": 30 * 60_000, "gate_soak": 60 * 60_000})}
    )
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
            changing = {
                d: sum(
                    1
                    for h in state.hosts.values()
                    if h.domain == d and h.current is not None and h.current.operation == CHANGE
                )
                for d in inventory.domains()
            }
            most_out = max(most_out, *changing.values())
            most_domains = max(most_domains, sum(n > 0 for n in changing.values()))
        final = read_fleet(settings)
        camp = final.trains.campaigns[cid]
        assert camp.status == "completed", describe(camp)
        assert camp.upgraded == len(HOSTS) and all(v.done_ts is not None for v in camp.visits.values())
        versions = read_inventory(settings)
        reported = {
            h: max(
                [
                    versions.versions_of(h)["driver"],
                    *filter(None, [final.trains.reported.get(h, {}).get("driver")]),
                ],
                key=lambda r: r[1],
            )[0]
            for h, _, _ in HOSTS
        }
        assert set(reported.values()) == {"560.35"}
        assert (
            most_out == 1 and most_domains == 1
        )  # at no step more than one domain's buffer out for the change
        assert all(h.current is None for h in final.hosts.values())  # every host returned
    finally:
        admin.delete_topics(settings, [s.name for s in settings.topics.all()])


def test_a_bad_change_halts_the_live_worker_from_its_hosts_error_rates(kafka, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A detect worker moves the campaign; the upgraded hosts throw NVLink XIDs three times as often as the
    others (no finding: too few on any GPU); the worker counts them per host-day and halts the train."""
    settings = isolated_settings(kafka.settings, partitions=2)
    admin.create_topics(settings)
    day = 86_400_000
    t0 = (int(time.time() * 1000) // day - 14) * day  # 39 steps of 8 h stay behind the worker's clock
    step_ms = day // 3
    (port,) = free_ports(1)
    worker = spawn_worker(settings, web_port=port, data_dir=tmp_path / "w", log_path=tmp_path / "w.log")
    try:
        cid = start_campaign(settings, worker, t0)
        upgraded: set[str] = set()
        status, xids = "running", dict.fromkeys((h for h, _, _ in HOSTS), 0)
        for step in range(1, 40):
            ts = t0 + step * step_ms
            errors = []
            for i, (host, cluster, _) in enumerate(HOSTS):
                if host in upgraded or (step + i) % 3 == 0:  # three a day on the new version, one on the old
                    xids[host] += 1  # each on the host's next GPU: no GPU sees three in five days
                    errors.append(nvlink_xid(host, cluster, ts + i, gpu=xids[host] % 8, seq=xids[host]))
            produce(settings, errors)
            time.sleep(1.5)
            answer_changes(settings, cid, upgraded, ts + 60_000)
            camp = campaign_of(worker, cid)
            status = camp["status"]
            if status != "running":
                break
        assert status == "halted", camp
        reason = camp["halted_reason"]
        assert reason.startswith("xid:") and "rate ratio" in reason and f"abort {cid} --rollback" in reason, (
            reason
        )
        actions = [a for a in decoded(settings, "actions") if a["event_type"] == "MaintenanceActionRecorded"]
        counted = [a for a in actions if a["payload"]["kind"] == "errors_counted"]
        assert counted and {a["payload"]["rule"] for a in counted} == {"errors/xid"}
        findings = [
            a for a in actions if a["payload"]["kind"] == "suspected" and a["payload"]["operation"] != CHANGE
        ]
        assert not findings, [
            (a["host_id"], a["ts"], a["payload"]["rule"]) for a in findings
        ]  # the halt came from the error rates
        # before the second domain: only the first domain's hosts were visited
        visited = {a["host_id"] for a in actions if a["payload"]["kind"] == "change_requested"}
        assert visited and {d for h, _, d in HOSTS if h in visited} == {"md0"}
        halts = [a for a in actions if a["payload"]["kind"] == "campaign_halted"]
        assert len(halts) == 1
    finally:
        assert worker.stop() == 0, (tmp_path / "w.log").read_text()[-3000:]
        admin.delete_topics(settings, [s.name for s in settings.topics.all()])


def start_campaign(settings: Settings, worker: WorkerProcess, t0: int) -> str:
    """HOSTS report driver 550.54.15 at ``t0``; a campaign to 560.35 (2 canaries) starts and the worker folds it."""
    worker.wait_ready(60)
    produce(settings, agent_records(t0, "550.54.15", HOSTS, inventory=True))
    start = start_record(CampaignSpec(change="driver=560.35", actor="test", canary=2), t0)
    send_records(settings, [start])
    cid: str = start["payload"]["campaign_id"]
    wait_for(
        lambda: any(c["campaign_id"] == cid for c in worker.get_json("/trains")),
        30,
        "the worker folds the campaign",
    )
    return cid


def answer_changes(settings: Settings, cid: str, upgraded: set[str], ts: int) -> None:
    """The hosts' side: each host the campaign asked to change reports the new version at ``ts``, once."""
    requested = {
        a["host_id"]
        for a in decoded(settings, "actions")
        if a["payload"]["kind"] == "change_requested" and a["payload"]["finding_id"] == cid
    }
    for host in sorted(requested - upgraded):
        domain = next(d for h, _, d in HOSTS if h == host)
        produce(settings, agent_records(ts, "560.35", [(host, "c1", domain)], inventory=False))
        upgraded.add(host)


def campaign_of(worker: WorkerProcess, cid: str) -> dict[str, Any]:
    [camp] = [c for c in worker.get_json("/trains") if c["campaign_id"] == cid]
    return camp  # type: ignore[no-any-return]


def nvlink_xid(host: str, cluster: str, ts: int, *, gpu: int, seq: int) -> tuple[str, bytes, bytes]:
    record = XidRaised(
        event_id=f"xid-{host}-{seq}",
        host_id=host,
        cluster=cluster,
        ts=ts,
        agent_seq=seq,
        payload={"gpu": gpu, "xid": 74, "pci_bus_id": "0000:1b:00.0"},
    ).to_record()
    return ("errors", kafka_key(record["event_type"], host), CODEC.encode(record))
