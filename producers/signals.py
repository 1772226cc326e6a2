"""What a host agent reports for each fault or noise occurrence: the payloads of its events.

One occurrence becomes one or more events with the same time and host (hardware signal first,
then the job interruption), following the shared fault-kind contract in producers/README.md.
"""

from __future__ import annotations

from typing import Any

from producers.fault_process import AER_ERRORS
from producers.noise import CE_AER_ERRORS
from producers.pci_layout import PCI_BUS_IDS
from schemas.xids import FELL_OFF_BUS, KIND_XIDS, ROW_REMAP_EVENT, XID_NAMES

Emitted = tuple[str, dict[str, Any]]  # (event_type, payload)


def xid(gpu: int, code: int) -> Emitted:
    return "XidRaised", {
        "gpu": gpu,
        "xid": code,
        "pci_bus_id": PCI_BUS_IDS[gpu % 8],
        "message": XID_NAMES[code],
    }


def ecc(
    gpu: int, memory: str, correctable: bool, count: int, row_remap: str = "none", total: int = 0
) -> Emitted:
    return "EccErrorObserved", {
        "gpu": gpu,
        "memory": memory,
        "correctable": correctable,
        "count": count,
        "row_remap": row_remap,
        "remapped_rows_total": total,
    }


def aer(gpu: int, severity: str, error_type: str) -> Emitted:
    device = PCI_BUS_IDS[gpu % 8]
    return "PcieAerReported", {"gpu": gpu, "device": device, "severity": severity, "error_type": error_type}


def link(port: int, kind: str, count: int, peer: str) -> Emitted:
    return "LinkEventObserved", {"port": port, "kind": kind, "count": count, "peer": peer}


def fault_events(
    kind: str,
    cause: str,
    gpu: int,
    port: int,
    aux1: int,
    aux2: int,
    *,
    job_id: str,
    job_gpus: int,
    peer: str,
    remapped_total: int,
    interrupts: bool,
) -> list[Emitted]:
    """The events of one fault; ``remapped_total`` is the GPU's remapped-row count after it."""
    out: list[Emitted] = []
    if kind == "fell_off_bus":
        out.append(xid(gpu, FELL_OFF_BUS))
        if aux1:
            out.append(aer(gpu, "fatal" if aux1 == 2 else "nonfatal", AER_ERRORS[aux2 % len(AER_ERRORS)]))
    elif kind == "dram_uce":
        out.append(ecc(gpu, "dram", False, aux1, "remap_event" if aux2 else "none", remapped_total))
        out.append(xid(gpu, KIND_XIDS[kind][0]))
        if aux2:
            out.append(xid(gpu, ROW_REMAP_EVENT))
    elif kind == "row_remap_failure":
        out.append(ecc(gpu, "dram", False, 1, "remap_failure", remapped_total))
        out.append(xid(gpu, KIND_XIDS[kind][0]))
    elif kind == "sram_uce":
        out.append(ecc(gpu, "sram", False, 1))
        out.append(xid(gpu, aux1 or KIND_XIDS[kind][0]))
    elif kind == "gsp_error":
        out.append(xid(gpu, aux1 or KIND_XIDS[kind][0]))
    elif kind in ("nvlink", "pmu_halt"):
        out.append(xid(gpu, KIND_XIDS[kind][0]))
    elif kind == "link_down":
        out.append(link(port, "down", 1, peer))
    elif kind == "nic":  # the adapter itself is gone (off the bus, firmware dead), not its cable
        out.append(link(port, "nic_lost", 1, peer))
    elif kind == "link_flap":
        out.append(link(port, "flap", max(aux1, 1), peer))
    if interrupts:
        out.append(
            (
                "JobInterrupted",
                {
                    "job_id": job_id,
                    "cause": cause,
                    "gpu": gpu if gpu >= 0 else None,
                    "job_gpus": job_gpus,
                    "detail": kind,
                },
            )
        )
    return out


# what a record that names only the host leaves out (the bus id with the GPU: both are unknown)
_PART_FIELDS = {"gpu": None, "port": None, "pci_bus_id": "", "device": "", "peer": None}


_HOST_LOG = frozenset({"XidRaised", "EccErrorObserved", "PcieAerReported", "LinkEventObserved"})


def naming_only_the_host(events: list[Emitted]) -> list[Emitted]:
    """The hardware events as a source that names only the host reports them: no GPU, port or bus id
    (a job interruption comes from the scheduler, which still names the GPU it lost)."""
    return [
        (kind, {k: _PART_FIELDS.get(k, v) for k, v in p.items()}) if kind in _HOST_LOG else (kind, p)
        for kind, p in events
    ]


def noise_events(kind: str, gpu: int, port: int, aux1: int, *, peer: str) -> list[Emitted]:
    """The single event of a noise occurrence (never of a repeat-offender class)."""
    if kind == "ecc_ce":
        return [ecc(gpu, "dram", True, aux1)]
    if kind == "app_xid":
        return [xid(gpu, aux1)]
    if kind == "aer_ce":
        return [aer(gpu, "correctable", CE_AER_ERRORS[aux1 % len(CE_AER_ERRORS)])]
    if kind == "flap":
        return [link(port, "flap", 1, peer)]
    raise ValueError(f"unknown noise kind {kind!r}")
