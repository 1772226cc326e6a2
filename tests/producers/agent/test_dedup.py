from __future__ import annotations

from producers.agent.collector import Fact
from producers.agent.dedup import XidDeduper


def xid(ts: int, source: str, gpu: int = 0, code: int = 79) -> Fact:
    return Fact("XidRaised", ts, {"gpu": gpu, "xid": code, "pci_bus_id": "", "message": ""}, source)


def test_second_source_within_window_is_dropped_once() -> None:
    d = XidDeduper(window_ms=10_000)
    assert d.keep(xid(1000, "kernel_log"))
    assert not d.keep(xid(6000, "nvml"))  # the same XID seen by NVML
    assert d.keep(xid(7000, "kernel_log"))  # a real repeat
    assert not d.keep(xid(8000, "nvml"))
    assert d.keep(xid(30_000, "nvml"))  # outside the window: a new one
    assert d.keep(xid(8000, "nvml", gpu=1))
    assert d.keep(Fact("EccErrorObserved", 0, {}, "nvml"))
