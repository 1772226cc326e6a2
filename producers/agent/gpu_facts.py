"""ECC and row-remap facts shared by the GPU sources (NVML and dcgm-exporter): one rule, two readers."""

from __future__ import annotations

from producers.agent.collector import Fact


class RemapTracker:
    """Turns row-remap readings into the simulator's ``row_remap`` values; a failure is reported once."""

    def __init__(self) -> None:
        self.failed: set[int] = set()

    def outcome(self, gpu: int, failure: bool, new_uncorrectable_rows: int, pending: bool) -> str:
        if not failure:
            self.failed.discard(gpu)
        elif gpu not in self.failed:
            self.failed.add(gpu)
            return "remap_failure"
        return "remap_event" if new_uncorrectable_rows > 0 or pending else "none"


def ecc_facts(
    gpu: int,
    ts: int,
    source: str,
    *,
    dram_uce: int,
    sram_uce: int,
    correctable: int,
    row_remap: str,
    rows_total: int,
) -> list[Fact]:
    """EccErrorObserved facts of one reading: uncorrectable DRAM (with its remap outcome), SRAM, correctable."""

    def ecc(memory: str, corr: bool, count: int, remap: str = "none") -> Fact:
        payload = {
            "gpu": gpu,
            "memory": memory,
            "correctable": corr,
            "count": count,
            "row_remap": remap,
            "remapped_rows_total": rows_total,
        }
        return Fact("EccErrorObserved", ts, payload, source)

    out = []
    if dram_uce or row_remap == "remap_failure":
        out.append(ecc("dram", False, max(dram_uce, 1), row_remap))
    if sram_uce:
        out.append(ecc("sram", False, sram_uce))
    if correctable:
        out.append(ecc("dram", True, correctable))
    return out
