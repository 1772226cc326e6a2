"""The twin's hosts speak as the simulator's agents do: HostInventoried and error records, same shapes.

Built from ``producers.signals`` (the payloads of each fault kind) with the agents' envelope, so the
real classifier and repeat-offender rules read them exactly as they read a simulated run.
"""

from __future__ import annotations

from typing import Any

from producers import signals
from producers.fleet import Fleet
from producers.generator import agent_record
from producers.schedule import INTERRUPTING

Record = dict[str, Any]


class Envelopes:
    """Per-host sequence numbers and the envelope around each payload (event ids ``<run>-<host>-<seq>``)."""

    def __init__(self, fleet: Fleet, run_id: str) -> None:
        self.fleet, self.run_id = fleet, run_id
        self.seq = [0] * fleet.n_hosts
        self.cluster = [fleet.host_cluster(h) for h in range(fleet.n_hosts)]
        self.fabric = fleet.fabric

    def record(self, host: int, ts: int, event_type: str, payload: dict[str, Any]) -> Record:
        self.seq[host] += 1
        return agent_record(
            self.run_id, self.fleet.host_id[host], self.cluster[host], self.seq[host], ts, event_type, payload
        )

    def inventory(self, host: int) -> Record:
        f = self.fleet
        return self.record(
            host,
            int(f.install_ts[host]),
            "HostInventoried",
            {
                "rack": f.rack[host],
                "fabric": self.fabric[host],
                "maintenance_domain": f.domain[host],
                "sku": f.config.sku,
                "install_ts": int(f.install_ts[host]),
                "gpu_count": f.config.gpus_per_host,
                "nic_ports": f.config.nic_ports,
            },
        )

    def fault(
        self,
        host: int,
        ts: int,
        kind: str,
        cause: str,
        gpu: int,
        port: int,
        aux: tuple[int, int],
        job: str,
        job_gpus: int,
    ) -> list[Record]:
        """The records of one fault on ``host`` (its job interruption last, when it interrupts)."""
        f = self.fleet
        slot = host % f.config.hosts_per_rack
        peer = f"{f.rack[host]}-leaf:eth{slot * f.config.nic_ports + max(port, 0)}"
        events = signals.fault_events(
            kind,
            cause,
            gpu,
            port,
            aux[0],
            aux[1],
            job_id=job,
            job_gpus=job_gpus,
            peer=peer,
            remapped_total=0,
            interrupts=kind in INTERRUPTING,
        )
        if f.host_only[host]:
            events = signals.naming_only_the_host(events)
        return [self.record(host, ts, et, p) for et, p in events]
