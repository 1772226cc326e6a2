"""Readings of one sample interval → the ``HostSampled`` payload, shaped exactly like the simulator's.

Counter fields are summed over the interval's polls, gauges keep the newest value; NIC throughput
is bytes over the seconds the polls covered; bus bandwidth is the mean of the ports' busier direction.
"""

from __future__ import annotations

from typing import Any

from producers.agent.collector import Observation

GPU_COUNTERS = ("ecc_sbe", "ecc_dbe", "pcie_replay", "nvlink_errors")
GPU_GAUGES = (
    "temp_c",
    "power_w",
    "sm_clock_mhz",
    "util_pct",
    "retired_pages",
    "pcie_link_gen",
    "pcie_link_width",
    "pcie_link_gen_max",
    "pcie_link_width_max",
    "throttle_reasons",
)
# HostSampled v2's GPU fields: null where no collector read them
NULLABLE_GPU = ("pcie_link_gen_max", "pcie_link_width_max", "throttle_reasons")
NIC_COUNTERS = ("rx_bytes", "tx_bytes", "dt_ms", "symbol_errors", "link_downed", "carrier_changes")


class SampleWindow:
    """Accumulates observations until the sample is due."""

    def __init__(self) -> None:
        self.gpus: dict[int, dict[str, Any]] = {}
        self.nics: dict[int, dict[str, int]] = {}

    def add(self, obs: Observation) -> None:
        for gpu, r in obs.gpus.items():
            acc = self.gpus.setdefault(gpu, {k: 0 for k in GPU_COUNTERS})
            for k in GPU_COUNTERS:
                acc[k] += int(r.get(k, 0))
            for k in GPU_GAUGES:
                if k in r:
                    acc[k] = r[k]
        for port, r in obs.nics.items():
            nic = self.nics.setdefault(port, {k: 0 for k in NIC_COUNTERS})
            for k in NIC_COUNTERS:
                nic[k] += int(r.get(k, 0))

    def payload(self, interval_s: int, step_ms: float | None, job_id: str | None) -> dict[str, Any]:
        """The HostSampled payload of the interval; the window starts over."""
        gpus = [
            {
                "gpu": g,
                "temp_c": round(float(r.get("temp_c", 0.0)), 2),
                "power_w": round(float(r.get("power_w", 0.0)), 2),
                "sm_clock_mhz": int(r.get("sm_clock_mhz", 0)),
                "util_pct": round(float(r.get("util_pct", 0.0)), 2),
                "ecc_sbe": r["ecc_sbe"],
                "ecc_dbe": r["ecc_dbe"],
                "retired_pages": int(r.get("retired_pages", 0)),
                "pcie_replay": r["pcie_replay"],
                "pcie_link_gen": int(r.get("pcie_link_gen", 0)),
                "pcie_link_width": int(r.get("pcie_link_width", 0)),
                "nvlink_errors": r["nvlink_errors"],
                **{k: None if r.get(k) is None else int(r[k]) for k in NULLABLE_GPU},
            }
            for g, r in sorted(self.gpus.items())
        ]
        nics = []
        for port, r in sorted(self.nics.items()):
            seconds = r["dt_ms"] / 1000 or float(interval_s)
            nics.append(
                {
                    "port": port,
                    "rx_gbps": round(r["rx_bytes"] * 8 / seconds / 1e9, 2),
                    "tx_gbps": round(r["tx_bytes"] * 8 / seconds / 1e9, 2),
                    "symbol_errors": r["symbol_errors"],
                    "link_downed": r["link_downed"],
                    "carrier_changes": r["carrier_changes"],
                }
            )
        bus_bw = sum(max(n["rx_gbps"], n["tx_gbps"]) for n in nics) / len(nics) if nics else 0.0
        self.gpus, self.nics = {}, {}
        return {
            "interval_s": interval_s,
            "job_id": job_id,
            # no job reporting: null (HostSampled v2), which the slow-host stage treats as not comparable
            "step_time_ms": round(step_ms, 2) if step_ms is not None else None,
            "bus_bw_gbps": round(bus_bw, 2),
            "gpus": gpus,
            "nics": nics,
        }
