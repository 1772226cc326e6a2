"""Which GPU or NIC port a PCI address belongs to, learnt from sysfs, NVML and the driver's own log lines."""

from __future__ import annotations

from dataclasses import dataclass, field

from producers.agent.kmsg import pci_bus


@dataclass
class Units:
    """GPU index by bus id (``0000:91:00.0``), GPU UUIDs, and NIC port index by the NIC's PCI function."""

    gpu_by_bus: dict[str, int] = field(default_factory=dict)
    uuid_by_bus: dict[str, str] = field(default_factory=dict)
    port_by_pci: dict[str, int] = field(default_factory=dict)

    def set_gpus(self, bus_ids: list[str]) -> None:
        """GPUs numbered in bus order (NVML's and nvidia-smi's default)."""
        self.gpu_by_bus = {pci_bus(b): i for i, b in enumerate(sorted({pci_bus(b) for b in bus_ids}))}

    def gpu(self, bus: str) -> int | None:
        """GPU index of a bus id; a function other than .0 of the same device is the same GPU."""
        found = self.gpu_by_bus.get(bus)
        if found is None and not bus.endswith(".0"):
            found = self.gpu_by_bus.get(bus.rsplit(".", 1)[0] + ".0")
        return found

    def port(self, pci: str) -> int | None:
        return self.port_by_pci.get(pci)

    def learn_uuid(self, bus: str, uuid: str) -> bool:
        """Record a GPU's UUID; True when it is new or changed (the inventory changed)."""
        if self.uuid_by_bus.get(bus) == uuid:
            return False
        self.uuid_by_bus[bus] = uuid
        if bus not in self.gpu_by_bus:
            self.set_gpus([*self.gpu_by_bus, bus])
        return True
