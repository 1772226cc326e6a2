"""The host's units as the events number them: GPUs by PCI bus order, NIC ports by (device, port) order.

nvidia-smi and NVML number GPUs by PCI bus id by default, so the sysfs order of NVIDIA display
controllers gives the same index without NVML; NIC ports are numbered across the host's RDMA devices.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from producers.agent.sysfs import SysfsReader

NVIDIA_VENDOR = 0x10DE
GPU_CLASSES = (0x0300, 0x0302)  # VGA and 3D controllers; NVSwitches (0x0680) are bridges


@dataclass(frozen=True, slots=True)
class NicPort:
    index: int
    device: str  # e.g. mlx5_0
    port: int  # the device's port number (1-based in sysfs)
    path: Path
    pci: str | None  # BDF of the device, if sysfs links it


def gpu_bus_ids(reader: SysfsReader) -> list[str]:
    """PCI addresses of the NVIDIA GPUs, in bus order (index = GPU number)."""
    found = []
    for dev in reader.listdir(reader.root / "bus" / "pci" / "devices"):
        vendor = _hex(dev / "vendor")
        if vendor != NVIDIA_VENDOR:
            continue
        cls = _hex(dev / "class")
        if cls is not None and (cls >> 8) in GPU_CLASSES:
            found.append(dev.name.lower())
    return sorted(found)


def nic_ports(reader: SysfsReader) -> list[NicPort]:
    """Every RDMA port under ``class/infiniband``, numbered across devices."""
    out: list[NicPort] = []
    for dev in reader.listdir(reader.root / "class" / "infiniband"):
        pci = _pci_of(dev)
        ports = [p for p in reader.listdir(dev / "ports") if p.name.isdigit()]
        for port in sorted(ports, key=lambda p: int(p.name)):
            out.append(NicPort(len(out), dev.name, int(port.name), port, pci))
    return out


def _hex(path: Path) -> int | None:
    try:
        return int(path.read_text().strip(), 16)
    except (OSError, ValueError):
        return None


def _pci_of(dev: Path) -> str | None:
    try:
        target = (dev / "device").resolve(strict=True)
    except OSError:
        return None
    return target.name.lower() if target.name.count(":") == 2 else None
