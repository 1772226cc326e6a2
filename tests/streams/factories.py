"""Record and finding factories for the streams tests, built with the real event classes."""

from __future__ import annotations

import itertools
from typing import Any

from schemas import EccErrorObserved, HostSampled, LinkEventObserved, PcieAerReported, XidRaised
from streams.core.findings import Finding
from streams.testing import START_TS

DAY = 86_400_000
_seq = itertools.count(1)


def envelope(host: str = "h1", ts: int = START_TS, cluster: str = "c0") -> dict[str, Any]:
    n = next(_seq)
    return {"event_id": f"e{n}", "host_id": host, "cluster": cluster, "ts": ts, "agent_seq": n}


def xid(xid: int, *, gpu: int = 0, **env: Any) -> dict[str, Any]:
    return XidRaised(
        **envelope(**env), payload={"gpu": gpu, "xid": xid, "pci_bus_id": "0000:1b:00.0"}
    ).to_record()


def ecc(
    *, memory: str = "dram", correctable: bool = False, gpu: int = 0, row_remap: str = "none", **env: Any
) -> dict[str, Any]:
    payload = {
        "gpu": gpu,
        "memory": memory,
        "correctable": correctable,
        "count": 1,
        "row_remap": row_remap,
        "remapped_rows_total": 0,
    }
    return EccErrorObserved(**envelope(**env), payload=payload).to_record()


def aer(severity: str = "fatal", *, gpu: int | None = 0, **env: Any) -> dict[str, Any]:
    payload = {"gpu": gpu, "device": "0000:1b:00.0", "severity": severity, "error_type": "completion_timeout"}
    return PcieAerReported(**envelope(**env), payload=payload).to_record()


def link(kind: str = "flap", *, port: int = 1, count: int = 1, **env: Any) -> dict[str, Any]:
    return LinkEventObserved(
        **envelope(**env), payload={"port": port, "kind": kind, "count": count, "peer": None}
    ).to_record()


def sample(
    step: float | None = 1000.0,
    bw: float = 380.0,
    *,
    interval_s: int = 60,
    job: str | None = "j1",
    **env: Any,
) -> dict[str, Any]:
    gpus = [
        {
            "gpu": g,
            "temp_c": 60.0,
            "power_w": 600.0,
            "sm_clock_mhz": 1980,
            "util_pct": 95.0,
            "ecc_sbe": 0,
            "ecc_dbe": 0,
            "retired_pages": 0,
            "pcie_replay": 0,
            "pcie_link_gen": 5,
            "pcie_link_width": 16,
            "nvlink_errors": 0,
            "pcie_link_gen_max": 5,
            "pcie_link_width_max": 16,
            "throttle_reasons": 0,
        }
        for g in range(8)
    ]
    nics = [
        {
            "port": 0,
            "rx_gbps": 1.0,
            "tx_gbps": 1.0,
            "symbol_errors": 0,
            "link_downed": 0,
            "carrier_changes": 0,
        }
    ]
    payload = {
        "interval_s": interval_s,
        "job_id": job,
        "step_time_ms": step,
        "bus_bw_gbps": bw,
        "gpus": gpus,
        "nics": nics,
    }
    return HostSampled(**envelope(**env), payload=payload).to_record()


def finding(
    host: str = "h1",
    *,
    ts: int = START_TS,
    action: str = "rma",
    fid: str | None = None,
    rule: str = "dram_uce_repeat_gpu",
) -> Finding:
    return Finding(
        finding_id=fid or f"f-{host}-{ts}-{action}",
        detector="repeat_offender",
        rule=rule,
        scope="host",
        scope_key=host,
        host_id=host,
        cluster="c0",
        ts=ts,
        error_class="dram_uce",
        count=2,
        window_start=ts - DAY,
        window_end=ts,
        recommended_action=action,
    )
