"""dcgm-exporter collector: scrape its Prometheus page and turn XID, ECC, PCIe, NVLink and row-remap fields into events
and readings (with HostSampled v2's PCIe maximum link and clocks-event reasons where the exporter publishes them).

``DCGM_FI_DEV_XID_ERRORS`` holds only the last XID (a repeat does not change it), so the XID count
``DCGM_EXP_XID_ERRORS_COUNT`` is used where the exporter publishes it, the last-XID gauge otherwise.
"""

from __future__ import annotations

import urllib.request
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from ground.settings.agent import DcgmSettings
from producers.agent.collector import Fact, Observation, Problems
from producers.agent.counters import CounterSet
from producers.agent.gpu_facts import RemapTracker, ecc_facts
from producers.agent.kmsg import pci_bus
from producers.agent.units import Units
from schemas.xids import xid_name

SOURCE = "dcgm"
GAUGES = {
    "DCGM_FI_DEV_GPU_TEMP": "temp_c",
    "DCGM_FI_DEV_POWER_USAGE": "power_w",
    "DCGM_FI_DEV_SM_CLOCK": "sm_clock_mhz",
    "DCGM_FI_DEV_GPU_UTIL": "util_pct",
    "DCGM_FI_DEV_PCIE_LINK_GEN": "pcie_link_gen",
    "DCGM_FI_DEV_PCIE_LINK_WIDTH": "pcie_link_width",
}
COUNTERS = {
    "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL": "ecc_sbe",
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": "ecc_dbe",
    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": "pcie_replay",
    "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL": "nvlink_errors",
    "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL": "nvlink_errors",
    "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL": "nvlink_errors",
    "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL": "nvlink_errors",
}
ROWS = {
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
    "DCGM_FI_DEV_ROW_REMAP_FAILURE",
    "DCGM_FI_DEV_ROW_REMAP_PENDING",
}
XID_LAST, XID_COUNT = "DCGM_FI_DEV_XID_ERRORS", "DCGM_EXP_XID_ERRORS_COUNT"
# HostSampled v2's GPU fields, null in the sample when the exporter's counter list leaves them out
NULLABLE = {
    "DCGM_FI_DEV_PCIE_MAX_LINK_GEN": "pcie_link_gen_max",
    "DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH": "pcie_link_width_max",
    "DCGM_FI_DEV_CLOCKS_EVENT_REASONS": "throttle_reasons",  # NVML's clocks-event bitmask
    "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": "throttle_reasons",
}  # its name before DCGM 3.3


Fetch = Callable[[str, float], str]  # (url, timeout in seconds) -> the page's text


def fetch_page(url: str, timeout_s: float) -> str:
    """GET a local Prometheus page with the stdlib: an HTTP client library would add ~8 MB to every agent."""
    with urllib.request.urlopen(url, timeout=timeout_s) as response:  # noqa: S310 (a configured local URL)
        return str(response.read().decode("utf-8"))


class DcgmCollector:
    name = SOURCE

    def __init__(
        self, settings: DcgmSettings, units: Units, problems: Problems, fetch: Fetch | None = None
    ) -> None:
        self.settings, self.units, self.problems = settings, units, problems
        self.interval_s = settings.interval_s
        self.fetch = fetch or fetch_page
        self.counters = CounterSet()
        self.last_xid: dict[int, int] = {}
        self.remaps = RemapTracker()

    def state(self) -> dict[str, Any]:
        return {
            "counters": self.counters.state(),
            "last_xid": {str(k): v for k, v in self.last_xid.items()},
            "remap_failed": sorted(self.remaps.failed),
        }

    def restore(self, state: dict[str, Any]) -> None:
        self.counters.restore(state.get("counters", {}))
        self.last_xid = {int(k): int(v) for k, v in state.get("last_xid", {}).items()}
        self.remaps.failed = set(state.get("remap_failed", []))

    def _page(self) -> str | None:
        try:
            return self.fetch(self.settings.url, self.settings.timeout_s)
        except (OSError, ValueError, UnicodeDecodeError) as exc:  # URLError and HTTPError are OSErrors
            self.problems.add(SOURCE, "scrape_failed", self.settings.url, f"{type(exc).__name__}: {exc}")
            return None

    def _gpu(self, labels: dict[str, str]) -> int | None:
        if "pci_bus_id" in labels:
            found = self.units.gpu(pci_bus(labels["pci_bus_id"]))
            if found is not None:
                return found
        try:
            gpu = labels["gpu"]
            if not gpu.isascii():  # ASCII digits only
                raise ValueError(gpu)
            return int(gpu)
        except (KeyError, ValueError):
            self.problems.add(SOURCE, "unmapped_gpu", str(sorted(labels.items()))[:80])
            return None

    def collect(self, now_ms: int) -> Observation:
        obs = Observation()
        page = self._page()
        if page is None:
            return obs
        values: dict[int, dict[str, float]] = defaultdict(dict)
        xid_counts: list[tuple[int, int, float]] = []
        try:
            for family in text_string_to_metric_families(page):
                name = (
                    family.name
                )  # the parser appends _total to counter samples; the family keeps DCGM's name
                for s in family.samples:
                    gpu = self._gpu(s.labels) if name.startswith("DCGM_") else None
                    if gpu is None:
                        continue
                    if (
                        name == XID_COUNT
                        and "xid" in s.labels
                        and s.labels["xid"].isascii()
                        and s.labels["xid"].isdigit()
                    ):
                        xid_counts.append((gpu, int(s.labels["xid"]), s.value))
                    else:
                        values[gpu][name] = values[gpu].get(name, 0.0) + s.value
        except ValueError as exc:
            self.problems.add(SOURCE, "garbled_page", self.settings.url, str(exc)[:120])
            return obs
        for gpu, v in values.items():
            self._gpu_values(gpu, v, now_ms, obs)
        self._xids(values, xid_counts, now_ms, obs)
        return obs

    def _gpu_values(self, gpu: int, v: dict[str, float], now_ms: int, obs: Observation) -> None:
        reading: dict[str, Any] = {field: v[name] for name, field in GAUGES.items() if name in v}
        reading.update({field: int(v[name]) for name, field in NULLABLE.items() if name in v})
        totals: dict[str, int] = defaultdict(int)
        for name, field in COUNTERS.items():
            if name in v:
                totals[field] += int(v[name])
        for field, total in totals.items():
            d = self.counters.delta(f"{gpu}:{field}", total)
            if d.outcome == "reset":
                self.problems.add(SOURCE, "counter_reset", f"gpu{gpu}/{field}")
            reading[field] = d.value
        unc = int(v.get("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", 0))
        reading["retired_pages"] = unc + int(v.get("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", 0))
        unc_new = self.counters.delta(f"{gpu}:unc_rows", unc).value if ROWS & v.keys() else 0
        remap = self.remaps.outcome(
            gpu,
            v.get("DCGM_FI_DEV_ROW_REMAP_FAILURE", 0) > 0,
            unc_new,
            v.get("DCGM_FI_DEV_ROW_REMAP_PENDING", 0) > 0,
        )
        obs.gpus[gpu] = reading
        obs.facts += ecc_facts(
            gpu,
            now_ms,
            SOURCE,
            dram_uce=reading.get("ecc_dbe", 0),
            sram_uce=0,
            correctable=reading.get("ecc_sbe", 0),
            row_remap=remap,
            rows_total=reading["retired_pages"],
        )

    def _xids(
        self,
        values: dict[int, dict[str, float]],
        counts: list[tuple[int, int, float]],
        now_ms: int,
        obs: Observation,
    ) -> None:
        def xid(gpu: int, code: int) -> Fact:
            payload = {"gpu": gpu, "xid": code, "pci_bus_id": self._bus(gpu), "message": xid_name(code)}
            return Fact("XidRaised", now_ms, payload, SOURCE)

        if counts:
            for gpu, code, value in counts:
                # a count over a sliding window: a decrease is XIDs ageing out, never a reset
                key = f"{gpu}:xid{code}"
                previous = self.counters.last.get(key)
                self.counters.last[key] = int(value)
                new = 0 if previous is None else max(0, int(value) - previous)
                obs.facts += [xid(gpu, code)] * new
            return
        for gpu, v in values.items():
            code = int(v.get(XID_LAST, 0))
            previous = self.last_xid.get(gpu)
            self.last_xid[gpu] = code
            if code and previous is not None and code != previous:
                obs.facts.append(xid(gpu, code))

    def _bus(self, gpu: int) -> str:
        return next((b for b, i in self.units.gpu_by_bus.items() if i == gpu), "")

    def close(self) -> None:
        """Nothing to release: each scrape opens and closes its own connection."""
