"""InfiniBand/RoCE port collector: ``/sys/class/infiniband/<dev>/ports/<n>/`` counters and state.

Link flaps (``link_downed`` increases), downs and ups (``state`` transitions), symbol-error bursts and
a lost adapter (its port folder gone from sysfs: the device fell off the bus or its driver let go of it)
become ``LinkEventObserved``; throughput and error deltas feed the host sample. Ports keep the numbers
of the agent's first start (saved with its state), so a port lost before a restart keeps its number.
Data counters are in units of 4 bytes (IBTA PortXmitData/PortRcvData). Error counters are narrow:
16 bits for symbol errors, 8 for link_downed and link_error_recovery, so wrap-around and resets are
told apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ground.settings.agent import InfinibandSettings
from producers.agent.collector import Fact, Observation, Problems
from producers.agent.counters import CounterSet
from producers.agent.sysfs import SysfsReader
from producers.agent.topology import NicPort, nic_ports
from producers.agent.units import Units

SOURCE = "infiniband"
COUNTER_BITS = {
    "port_rcv_data": 64,
    "port_xmit_data": 64,
    "symbol_error": 16,
    "link_downed": 8,
    "link_error_recovery": 8,
}
FABRIC_OF_LINK_LAYER = {"infiniband": "infiniband", "ethernet": "roce"}


class InfinibandCollector:
    name = SOURCE

    def __init__(
        self,
        settings: InfinibandSettings,
        reader: SysfsReader,
        problems: Problems,
        units: Units | None = None,
    ) -> None:
        """``units``, when given, learns which port each NIC's PCI address is (for AER and kernel-log errors)."""
        self.settings, self.reader, self.problems, self.units = settings, reader, problems, units
        self.interval_s = settings.interval_s
        self.ports: list[NicPort] = []
        self._set_ports(nic_ports(reader))
        self.counters = CounterSet()
        self.active: dict[int, bool] = {}
        self.last_ms: dict[int, int] = {}
        self.lost: set[int] = set()

    def inventory(self) -> dict[str, Any]:
        layers = {self.reader.text(p.path / "link_layer") or "" for p in self.ports}
        fabrics = sorted(
            {FABRIC_OF_LINK_LAYER[x.lower()] for x in layers if x.lower() in FABRIC_OF_LINK_LAYER}
        )
        return {
            "nics": [f"{p.device}/{p.port}" for p in self.ports],
            "fabric": fabrics[0] if fabrics else None,
        }

    def state(self) -> dict[str, Any]:
        return {
            "counters": self.counters.state(),
            "active": {str(k): v for k, v in self.active.items()},
            "last_ms": {str(k): v for k, v in self.last_ms.items()},
            "lost": sorted(self.lost),
            "ports": [[p.device, p.port, p.pci] for p in self.ports],
        }

    def restore(self, state: dict[str, Any]) -> None:
        self.counters.restore(state.get("counters", {}))
        self.active = {int(k): bool(v) for k, v in state.get("active", {}).items()}
        self.last_ms = {int(k): int(v) for k, v in state.get("last_ms", {}).items()}
        self.lost = {int(k) for k in state.get("lost", [])}
        saved = [(str(d), int(n), pci) for d, n, pci in state.get("ports", [])]
        self._set_ports(renumbered(self.ports, saved, self.reader.root / "class" / "infiniband"))

    def _set_ports(self, ports: list[NicPort]) -> None:
        self.ports = ports
        self._inventory = self.inventory()
        if self.units is not None:
            self.units.port_by_pci = {p.pci: p.index for p in ports if p.pci and p.port == 1}

    def collect(self, now_ms: int) -> Observation:
        obs = Observation(inventory=dict(self._inventory))
        for port in self.ports:
            self._port(port, now_ms, obs)
        return obs

    def _delta(self, port: NicPort, name: str) -> int | None:
        value = self.reader.integer(port.path / "counters" / name)
        if value is None:
            return None
        d = self.counters.delta(f"{port.index}:{name}", value, COUNTER_BITS[name])
        if d.outcome in ("reset", "wrapped"):
            self.problems.add(SOURCE, f"counter_{d.outcome}", f"{port.device}/{port.port}/{name}")
        return d.value

    def _port(self, port: NicPort, now_ms: int, obs: Observation) -> None:
        if not port.path.is_dir():
            if port.index not in self.lost:
                self.lost.add(port.index)
                payload = {"port": port.index, "kind": "nic_lost", "count": 1, "peer": None}
                obs.facts.append(Fact("LinkEventObserved", now_ms, payload, SOURCE))
            self.last_ms.pop(port.index, None)
            return
        self.lost.discard(port.index)
        state = self.reader.text(port.path / "state")
        deltas = {name: self._delta(port, name) for name in COUNTER_BITS}
        dt_ms = now_ms - self.last_ms[port.index] if port.index in self.last_ms else 0
        self.last_ms[port.index] = now_ms
        downed = deltas["link_downed"] or 0
        reading: dict[str, Any] = {
            "rx_bytes": 4 * (deltas["port_rcv_data"] or 0),
            "tx_bytes": 4 * (deltas["port_xmit_data"] or 0),
            "dt_ms": dt_ms,
            "symbol_errors": deltas["symbol_error"] or 0,
            "link_downed": downed,
            "carrier_changes": 2 * downed,
            "recoveries": deltas["link_error_recovery"] or 0,
        }
        obs.nics[port.index] = reading
        if state is None:
            return
        active = "ACTIVE" in state.upper()
        was = self.active.get(port.index)
        self.active[port.index] = active
        events: list[tuple[str, int]] = []
        if was is True and not active:
            events.append(("down", 1))
            downed -= 1
        elif was is False and active:
            events.append(("up", 1))
            reading["carrier_changes"] += 1
        if downed > 0 and active:
            events.append(("flap", downed))
        symbols = deltas["symbol_error"] or 0
        if symbols >= self.settings.symbol_error_threshold:
            events.append(("symbol_errors", symbols))
        for kind, count in events:
            payload = {"port": port.index, "kind": kind, "count": count, "peer": None}
            obs.facts.append(Fact("LinkEventObserved", now_ms, payload, SOURCE))

    def close(self) -> None:
        return None


def renumbered(found: list[NicPort], saved: list[tuple[str, int, str | None]], folder: Path) -> list[NicPort]:
    """The saved numbering (ports gone since keep theirs), then ports new since, numbered after them."""
    if not saved:
        return found
    out = [
        NicPort(i, device, port, folder / device / "ports" / str(port), pci)
        for i, (device, port, pci) in enumerate(saved)
    ]
    known = {(device, port) for device, port, _ in saved}
    for p in found:
        if (p.device, p.port) not in known:
            out.append(NicPort(len(out), p.device, p.port, p.path, p.pci))
    return out
