"""The hardware event an imported incident stands for, so the repeat-offender rules see imported history.

The mapping's ``[signals]`` names, per source-class prefix, which raw signal an incident of that
class is (a GPU lost is XID 79, a DBE an uncorrectable DRAM ECC error, a link down or a lost NIC a
link event); any other part a class names (PSU, fan, PCIe width, NIC GID table, link speed) is a
``component_fault``: a ``ComponentFaultObserved`` carrying the incident's cause, which the policy's
per-cause host rules count. Its GPU or port is the incident's component when that is a plain index, else null:
the event names only the host, and the host-level rules count it. Ids derive from the incident's,
so a second import adds nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from schemas.events import ComponentFaultObserved, EccErrorObserved, Event, LinkEventObserved, XidRaised
from schemas.taxonomy import incident_signal_id

HardwareSignal = Literal["gpu_lost", "dram_uce", "sram_uce", "link_down", "nic_lost", "component_fault"]


def _part(component: str | None) -> int | None:
    text = (component or "").strip()
    return int(text) if text.isdigit() and int(text) < 64 else None


def _event(signal: HardwareSignal, p: Mapping[str, Any]) -> tuple[type[Event], dict[str, Any]]:
    if signal == "component_fault":
        return ComponentFaultObserved, {
            "cause": p["cause"],
            "component_kind": p["component_kind"],
            "component": p["component"],
            "count": 1,
        }
    part, text = _part(p["component"]), p["source_text"] or p["source_class"]
    if signal == "gpu_lost":
        return XidRaised, {"gpu": part, "xid": 79, "pci_bus_id": "", "message": text}
    if signal in ("dram_uce", "sram_uce"):
        return EccErrorObserved, {
            "gpu": part,
            "memory": signal[:4],
            "correctable": False,
            "count": 1,
            "row_remap": "none",
            "remapped_rows_total": 0,
        }
    kind = "down" if signal == "link_down" else "nic_lost"
    return LinkEventObserved, {"port": part, "kind": kind, "count": 1, "peer": None}


def hardware_records(
    incidents: Iterable[Mapping[str, Any]], signal_of: Mapping[str, HardwareSignal | None]
) -> list[dict[str, Any]]:
    """One error event per incident whose source class has a signal (``signal_of``: class → signal)."""
    out: list[dict[str, Any]] = []
    for inc in incidents:
        p = inc["payload"]
        signal = signal_of.get(p["source_class"])
        if signal is None:
            continue
        klass, payload = _event(signal, p)
        out.append(
            {  # klass(...).to_record(), written out: this loop runs once per incident
                "event_id": incident_signal_id(inc["event_id"]),
                "event_type": klass.EVENT_TYPE,
                "schema_version": klass.SCHEMA_VERSION,
                "host_id": inc["host_id"],
                "cluster": inc["cluster"],
                "ts": inc["ts"],
                "agent_seq": 0,
                "payload": payload,
            }
        )
    return out
