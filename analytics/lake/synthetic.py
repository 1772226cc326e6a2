"""Small deterministic event sets of every type, for lake tests and demos (not the fleet simulator).

Records are valid against the suites: inventory first, then samples and error events of those
hosts, a finding, an action, an alert and a dead letter, all inside ``[start_ms, start_ms + span_ms)``.
"""

from __future__ import annotations

import random
from typing import Any

from schemas import (
    FLEET,
    AlertRaised,
    EccErrorObserved,
    FindingRaised,
    HostInventoried,
    HostSampled,
    JobInterrupted,
    LinkEventObserved,
    MaintenanceActionRecorded,
    PcieAerReported,
    RecordDeadLettered,
    XidRaised,
)

START_MS = 1_735_689_600_000  # 2025-01-01T00:00:00Z
HOUR_MS = 3_600_000


def host_ids(n_hosts: int) -> list[str]:
    return [f"h{i:04d}" for i in range(n_hosts)]


def _gpu(i: int, rng: random.Random) -> dict[str, Any]:
    return {
        "gpu": i,
        "temp_c": 40.0 + rng.random() * 30,
        "power_w": 300.0 + rng.random() * 400,
        "sm_clock_mhz": 1980,
        "util_pct": 90.0 + rng.random() * 10,
        "ecc_sbe": rng.randrange(3),
        "ecc_dbe": 0,
        "retired_pages": 0,
        "pcie_replay": rng.randrange(5),
        "pcie_link_gen": 5,
        "pcie_link_width": 16,
        "nvlink_errors": 0,
        "pcie_link_gen_max": 5,
        "pcie_link_width_max": 16,
        "throttle_reasons": 0,
    }


def _nic(port: int, rng: random.Random) -> dict[str, Any]:
    return {
        "port": port,
        "rx_gbps": 300.0 + rng.random() * 50,
        "tx_gbps": 300.0 + rng.random() * 50,
        "symbol_errors": 0,
        "link_downed": 0,
        "carrier_changes": 0,
    }


def synthetic_records(
    n_hosts: int = 4,
    samples_per_host: int = 3,
    *,
    start_ms: int = START_MS,
    span_ms: int = 48 * HOUR_MS,
    seed: int = 1,
    id_prefix: str = "ev",
) -> list[dict[str, Any]]:
    """Event records (envelope + payload dicts) of every event type; deterministic for a seed."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    counter = 0

    def eid() -> str:
        nonlocal counter
        counter += 1
        return f"{id_prefix}-{counter:07d}"

    def when() -> int:
        return start_ms + rng.randrange(span_ms)

    hosts = host_ids(n_hosts)
    for i, host in enumerate(hosts):
        cluster = "rsc1" if i % 2 == 0 else "rsc2"
        out.append(
            HostInventoried(
                event_id=eid(),
                host_id=host,
                cluster=cluster,
                ts=start_ms,
                agent_seq=0,
                payload={
                    "rack": f"r{i // 2}",
                    "fabric": "roce" if i % 2 == 0 else "infiniband",
                    "maintenance_domain": f"md{i // 4}",
                    "sku": "H100-SXM5-80GB",
                    "install_ts": start_ms - 30 * 24 * HOUR_MS,
                    "gpu_count": 8,
                    "nic_ports": 8,
                },
            ).to_record()
        )
        for s in range(samples_per_host):
            out.append(
                HostSampled(
                    event_id=eid(),
                    host_id=host,
                    cluster=cluster,
                    ts=when(),
                    agent_seq=s + 1,
                    payload={
                        "interval_s": 10,
                        "job_id": "job-1",
                        "step_time_ms": 1000.0 + rng.random() * 50,
                        "bus_bw_gbps": 350.0,
                        "gpus": [_gpu(g, rng) for g in range(8)],
                        "nics": [_nic(p, rng) for p in range(2)],
                    },
                ).to_record()
            )
        env: dict[str, Any] = {"host_id": host, "cluster": cluster, "agent_seq": samples_per_host + 1}
        out.append(
            XidRaised(
                event_id=eid(),
                ts=when(),
                **env,
                payload={"gpu": 3, "xid": 79, "pci_bus_id": "0000:1b:00.0", "message": ""},
            ).to_record()
        )
        out.append(
            EccErrorObserved(
                event_id=eid(),
                ts=when(),
                **env,
                payload={
                    "gpu": 1,
                    "memory": "dram",
                    "correctable": False,
                    "count": 1,
                    "row_remap": "none",
                    "remapped_rows_total": 0,
                },
            ).to_record()
        )
        out.append(
            PcieAerReported(
                event_id=eid(),
                ts=when(),
                **env,
                payload={
                    "gpu": 3,
                    "device": "0000:1b:00.0",
                    "severity": "fatal",
                    "error_type": "completion_timeout",
                },
            ).to_record()
        )
        out.append(
            LinkEventObserved(
                event_id=eid(),
                ts=when(),
                **env,
                payload={"port": 1, "kind": "flap", "count": 1, "peer": None},
            ).to_record()
        )
        out.append(
            JobInterrupted(
                event_id=eid(),
                ts=when(),
                **env,
                payload={
                    "job_id": "job-1",
                    "cause": "faulty_gpu",
                    "gpu": 3,
                    "job_gpus": 8 * n_hosts,
                    "detail": "",
                },
            ).to_record()
        )
    t = when()
    out.append(
        FindingRaised(
            event_id=eid(),
            host_id=hosts[0],
            cluster="rsc1",
            ts=t,
            payload={
                "finding_id": "f-1",
                "detector": "repeat_offender",
                "rule": "fell_off_bus_2_in_30d",
                "scope": "gpu",
                "scope_key": f"{hosts[0]}/3",
                "error_class": "fell_off_bus",
                "count": 2,
                "window_start": t - 24 * HOUR_MS,
                "window_end": t,
                "recommended_action": "rma",
                "severity": "critical",
                "score": None,
                "evidence": {"xid": "79"},
            },
        ).to_record()
    )
    out.append(
        MaintenanceActionRecorded(
            event_id=eid(),
            host_id=hosts[0],
            cluster="rsc1",
            ts=t,
            payload={
                "action_id": "a-1",
                "kind": "rma_opened",
                "operation": "rma",
                "maintenance_domain": "md0",
                "finding_id": "f-1",
                "rule": None,
                "reason": "repeat offender",
                "caused_by": None,
            },
        ).to_record()
    )
    out.append(
        AlertRaised(
            event_id=eid(),
            host_id=FLEET,
            cluster=FLEET,
            ts=t,
            payload={
                "alert_id": "al-1",
                "alertname": "NewRMA",
                "severity": "critical",
                "status": "firing",
                "labels": {"host": hosts[0]},
                "annotations": {},
                "generator_url": None,
            },
        ).to_record()
    )
    out.append(
        RecordDeadLettered(
            event_id=eid(),
            host_id=FLEET,
            cluster=FLEET,
            ts=t,
            payload={
                "reason": "bad magic byte",
                "error_type": "FramingError",
                "source_topic": "fleet.errors",
                "source_partition": 0,
                "source_offset": 7,
                "schema_id": None,
                "original_key": None,
                "original_value": b"\x01garbage",
            },
        ).to_record()
    )
    return out
