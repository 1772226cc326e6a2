"""Pure parsing of kernel-log records: the ``/dev/kmsg`` framing and the lines the agent acts on.

NVIDIA ``Xid`` lines in every driver's form, NVSwitch ``SXid`` lines, the driver's ``GPU at PCI:…``
line (maps a bus id to a GPU UUID), PCIe AER lines and mlx5 link up/down. A cheap substring test
rejects every other line before any regex runs, so an XID storm costs one regex per line.
"""

from __future__ import annotations

import functools
import re
from typing import Literal, NamedTuple

KernelKind = Literal["xid", "sxid", "gpu_at", "aer", "link", "garbled"]

_XID = re.compile(
    r"NVRM: Xid \((?:PCI:)?(?P<bus>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})(?:\.[0-7])?\): "
    r"(?P<code>\d+)(?:,\s*(?:pid=[^,]*,\s*name=[^,]*,?\s*)?(?P<rest>.*))?$",
    re.ASCII,  # \d is 0-9 only: an Arabic-Indic 3 is not XID 3
)
_SXID = re.compile(
    r"nvidia-nvswitch(?P<switch>\d+): SXid \(PCI:(?P<bus>[0-9a-fA-F:.]+)\): (?P<code>\d+)(?:,\s*(?P<rest>.*))?$",
    re.ASCII,
)
_GPU_AT = re.compile(
    r"NVRM: GPU at PCI:(?P<bus>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})(?:\.[0-7])?: (?P<uuid>GPU-[0-9a-fA-F-]+)"
)
_AER = re.compile(
    r"(?P<bdf>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]): PCIe Bus Error: "
    r"severity=(?P<severity>[^,]+), type=(?P<type>[^,]+)"
)
_LINK = re.compile(
    r"mlx5_core (?P<bdf>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]) (?P<ifname>\S+): Link (?P<state>up|down)"
)
KMSG_HEADER = re.compile(r"\d+,(\d+),(\d+),[^;]*;", re.ASCII)  # priority,sequence,timestamp_us,flags[,...];
_SEVERITY = {
    "corrected": "correctable",
    "uncorrected (non-fatal)": "nonfatal",
    "uncorrected (fatal)": "fatal",
    "uncorrectable (non-fatal)": "nonfatal",
    "uncorrectable (fatal)": "fatal",
}
MAX_MESSAGE = 200


class KmsgRecord(NamedTuple):
    """One ``/dev/kmsg`` record: ``priority,sequence,timestamp_us,flags[,…];message``."""

    seq: int
    ts_us: int
    message: str


class KernelEvent(NamedTuple):
    """A kernel-log line the agent acts on; ``bus`` is normalised by ``pci_bus``."""

    kind: KernelKind
    bus: str = ""
    code: int = 0
    text: str = ""


def parse_kmsg(line: str) -> KmsgRecord | None:
    """The record of one kmsg line; None for continuation lines (`` KEY=value``) and garbage."""
    m = KMSG_HEADER.match(line)
    if m is None:
        return None
    message = line[m.end() :]
    return KmsgRecord(int(m.group(1)), int(m.group(2)), message[:-1] if message.endswith("\n") else message)


@functools.lru_cache(maxsize=4096)  # a host has a few dozen PCI functions; an XID storm repeats them
def pci_bus(text: str) -> str:
    """``00000000:91:00.0``, ``0000:91:00`` or ``91:00.0`` → ``0000:91:00.0`` (NVML, kernel and sysfs agree)."""
    parts = text.lower().split(":")
    if len(parts) == 2:
        parts = ["0000", *parts]
    domain, bus, rest = parts[-3], parts[-2], parts[-1]
    device, _, function = rest.partition(".")
    return f"{int(domain, 16):04x}:{bus}:{device}.{function or '0'}"


def classify_line(message: str) -> KernelEvent | None:
    """What a kernel message says, or None when the agent does not act on it."""
    if "NVRM" in message:
        if "Xid" in message:
            m = _XID.search(message)
            if m is None:
                return KernelEvent("garbled", text=message[:MAX_MESSAGE])
            rest = m.group("rest") or ""
            return KernelEvent(
                "xid", pci_bus(m.group("bus")), int(m.group("code")), rest.strip()[:MAX_MESSAGE]
            )
        if "GPU at PCI:" in message:
            m = _GPU_AT.search(message)
            return None if m is None else KernelEvent("gpu_at", pci_bus(m.group("bus")), text=m.group("uuid"))
        return None
    if "SXid" in message:
        m = _SXID.search(message)
        if m is None:
            return KernelEvent("garbled", text=message[:MAX_MESSAGE])
        return KernelEvent(
            "sxid", pci_bus(m.group("bus")), int(m.group("code")), (m.group("rest") or "")[:MAX_MESSAGE]
        )
    if "PCIe Bus Error" in message:
        m = _AER.search(message)
        if m is None:
            return KernelEvent("garbled", text=message[:MAX_MESSAGE])
        severity = _SEVERITY.get(m.group("severity").strip().lower(), "nonfatal")
        error_type = m.group("type").strip().lower().replace(" ", "_")
        return KernelEvent("aer", pci_bus(m.group("bdf")), text=f"{severity}:{error_type}")
    if "mlx5_core" in message and "Link " in message:
        m = _LINK.search(message)
        return None if m is None else KernelEvent("link", pci_bus(m.group("bdf")), text=m.group("state"))
    return None
