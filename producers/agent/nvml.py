"""NVML collector (``nvidia-ml-py``, imported as ``pynvml``): XID events, ECC, row remapping, PCIe, NVLink, gauges.

A field the GPU does not support is recorded once and not asked again; a GPU that is lost
(``NVML_ERROR_GPU_IS_LOST``) is reported as XID 79, fell off the bus, once per loss, never a crash.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from ground.settings.agent import NvmlSettings
from producers.agent.collector import Fact, Observation, Problems
from producers.agent.counters import CounterSet
from producers.agent.gpu_facts import RemapTracker, ecc_facts
from producers.agent.kmsg import pci_bus
from producers.agent.units import Units
from schemas.xids import FELL_OFF_BUS, xid_name

SOURCE = "nvml"
NVLINK_COUNTERS = (0, 1, 2, 3)  # DL_REPLAY, DL_RECOVERY, DL_CRC_FLIT, DL_CRC_DATA


def init_nvml(module: Any | None = None) -> Any:
    """pynvml, initialised (``module``: a stand-in, in tests); raises what the import or ``nvmlInit`` raise."""
    nv = module or importlib.import_module("pynvml")
    nv.nvmlInit()
    return nv


class _Lost(Exception):
    """The GPU answered NVML_ERROR_GPU_IS_LOST."""


class NvmlCollector:
    name = SOURCE

    def __init__(
        self, settings: NvmlSettings, units: Units, problems: Problems, nvml: ModuleType | None = None
    ) -> None:
        self.settings, self.units, self.problems = settings, units, problems
        self.interval_s = settings.interval_s
        self._module = nvml
        self.nv: Any = None
        self.handles: list[Any] = []
        self.buses: list[str] = []
        self.events: Any = None
        self.unsupported: set[tuple[int, str]] = set()
        self.links: dict[int, list[int]] = {}
        self.counters = CounterSet()
        self.lost: set[int] = set()
        self.remaps = RemapTracker()
        self.info: dict[str, Any] = {}

    def state(self) -> dict[str, Any]:
        return {
            "counters": self.counters.state(),
            "lost": sorted(self.lost),
            "remap_failed": sorted(self.remaps.failed),
        }

    def restore(self, state: dict[str, Any]) -> None:
        self.counters.restore(state.get("counters", {}))
        self.lost = set(state.get("lost", []))
        self.remaps.failed = set(state.get("remap_failed", []))

    def start(self) -> bool:
        """Initialise NVML and learn the GPUs; False (counted once) where there is no driver."""
        if self.nv is not None:
            return True
        try:
            nv = init_nvml(self._module)
        except Exception as exc:  # ImportError, or NVMLError_LibraryNotFound / DriverNotLoaded
            self.problems.add(SOURCE, "unavailable", "", f"{type(exc).__name__}: {exc}")
            return False
        self.nv = nv
        self.handles = [nv.nvmlDeviceGetHandleByIndex(i) for i in range(nv.nvmlDeviceGetCount())]
        self.buses = [pci_bus(_text(nv.nvmlDeviceGetPciInfo(h).busId)) for h in self.handles]
        self.units.set_gpus([*self.units.gpu_by_bus, *self.buses])
        self.info = {
            "driver_version": _text(nv.nvmlSystemGetDriverVersion()),
            "sku": _text(nv.nvmlDeviceGetName(self.handles[0])) if self.handles else None,
            "gpu_serials": {b: self._serial(h) for b, h in zip(self.buses, self.handles, strict=True)},
        }
        for bus, h in zip(self.buses, self.handles, strict=True):
            self.units.learn_uuid(bus, _text(nv.nvmlDeviceGetUUID(h)))
        self._register_xid_events()
        return True

    def _serial(self, handle: Any) -> str | None:
        try:
            return _text(self.nv.nvmlDeviceGetSerial(handle))
        except self.nv.NVMLError:
            return None

    def _register_xid_events(self) -> None:
        nv = self.nv
        try:
            self.events = nv.nvmlEventSetCreate()
        except nv.NVMLError as exc:
            self.problems.add(SOURCE, "unsupported", "event_set", str(exc))
            return
        for i, h in enumerate(self.handles):
            try:
                if nv.nvmlDeviceGetSupportedEventTypes(h) & nv.nvmlEventTypeXidCriticalError:
                    nv.nvmlDeviceRegisterEvents(h, nv.nvmlEventTypeXidCriticalError, self.events)
                else:
                    self.problems.add(SOURCE, "unsupported", f"gpu{i}/xid_events")
            except nv.NVMLError as exc:
                self.problems.add(SOURCE, "unsupported", f"gpu{i}/xid_events", str(exc))

    def collect(self, now_ms: int) -> Observation:
        obs = Observation()
        if not self.start():
            return obs
        obs.inventory.update(self.info)
        self._drain_xids(now_ms, obs)
        for i, h in enumerate(self.handles):
            gpu = self.units.gpu(self.buses[i])
            if gpu is None:
                continue
            try:
                self._gpu(gpu, h, now_ms, obs)
            except _Lost:
                if gpu not in self.lost:
                    self.lost.add(gpu)
                    payload = {
                        "gpu": gpu,
                        "xid": FELL_OFF_BUS,
                        "pci_bus_id": self.buses[i],
                        "message": xid_name(FELL_OFF_BUS),
                    }
                    obs.facts.append(Fact("XidRaised", now_ms, payload, SOURCE))
                obs.gpus.pop(gpu, None)
                continue
            self.lost.discard(gpu)
        return obs

    def _drain_xids(self, now_ms: int, obs: Observation) -> None:
        nv = self.nv
        if self.events is None:
            return
        for _ in range(10_000):
            try:
                data = nv.nvmlEventSetWait_v2(self.events, self.settings.event_wait_ms)
            except nv.NVMLError as exc:
                if getattr(exc, "value", None) != nv.NVML_ERROR_TIMEOUT:
                    self.problems.add(SOURCE, "event_wait_failed", "", str(exc))
                return
            if not data.eventType & nv.nvmlEventTypeXidCriticalError:
                continue
            bus = pci_bus(_text(nv.nvmlDeviceGetPciInfo(data.device).busId))
            gpu = self.units.gpu(bus)
            if gpu is None:
                self.problems.add(SOURCE, "unmapped_gpu", bus)
                continue
            code = int(data.eventData)
            payload = {"gpu": gpu, "xid": code, "pci_bus_id": bus, "message": xid_name(code)}
            obs.facts.append(Fact("XidRaised", now_ms, payload, SOURCE))

    def _get(self, gpu: int, field: str, fn: str, *args: Any) -> Any:
        """One NVML read; None when unsupported (recorded once) or failing (counted)."""
        if (gpu, field) in self.unsupported:
            return None
        nv = self.nv
        call = getattr(nv, fn, None)
        if call is None:  # an older nvidia-ml-py without this function
            self.unsupported.add((gpu, field))
            self.problems.add(SOURCE, "unsupported", f"gpu{gpu}/{field}", f"no {fn} in this nvidia-ml-py")
            return None
        try:
            return call(*args)
        except nv.NVMLError as exc:
            code = getattr(exc, "value", None)
            if code == nv.NVML_ERROR_GPU_IS_LOST:
                raise _Lost from exc
            if code in (nv.NVML_ERROR_NOT_SUPPORTED, getattr(nv, "NVML_ERROR_FUNCTION_NOT_FOUND", 13)):
                self.unsupported.add((gpu, field))
                self.problems.add(SOURCE, "unsupported", f"gpu{gpu}/{field}")
            else:
                self.problems.add(SOURCE, "read_failed", f"gpu{gpu}/{field}", str(exc))
            return None

    def _throttle(self, gpu: int, h: Any) -> Any:
        """Clock event reasons bitmask: ``…ClocksEventReasons`` (nvidia-ml-py ≥ 12.535, drivers ≥ R535),
        else the deprecated ``…ClocksThrottleReasons`` older bindings and drivers have (the same bits)."""
        value = self._get(gpu, "throttle_reasons", "nvmlDeviceGetCurrentClocksEventReasons", h)
        if value is None and (gpu, "throttle_reasons") in self.unsupported:
            value = self._get(gpu, "throttle_reasons_legacy", "nvmlDeviceGetCurrentClocksThrottleReasons", h)
        return value

    def _ecc_total(self, gpu: int, h: Any, field: str, kind: int) -> Any:
        """Volatile ECC count (since the driver loaded), else the aggregate (lifetime) one where volatile is unsupported."""
        nv = self.nv
        value = self._get(gpu, field, "nvmlDeviceGetTotalEccErrors", h, kind, nv.NVML_VOLATILE_ECC)
        if value is None:
            value = self._get(
                gpu, f"{field}_aggregate", "nvmlDeviceGetTotalEccErrors", h, kind, nv.NVML_AGGREGATE_ECC
            )
        return value

    def _delta(self, gpu: int, field: str, value: Any) -> int:
        if value is None:
            return 0
        d = self.counters.delta(f"{gpu}:{field}", int(value))
        if d.outcome == "reset":
            self.problems.add(SOURCE, "counter_reset", f"gpu{gpu}/{field}")
        return d.value

    def _gpu(self, gpu: int, h: Any, now_ms: int, obs: Observation) -> None:
        nv, g = self.nv, self._get
        temp = g(gpu, "temp_c", "nvmlDeviceGetTemperature", h, nv.NVML_TEMPERATURE_GPU)
        power = g(gpu, "power_w", "nvmlDeviceGetPowerUsage", h)
        util = g(gpu, "util_pct", "nvmlDeviceGetUtilizationRates", h)
        sbe = self._ecc_total(gpu, h, "ecc_sbe", nv.NVML_MEMORY_ERROR_TYPE_CORRECTED)
        dbe = self._ecc_total(gpu, h, "ecc_dbe", nv.NVML_MEMORY_ERROR_TYPE_UNCORRECTED)
        sram = g(
            gpu,
            "ecc_sram_dbe",
            "nvmlDeviceGetMemoryErrorCounter",
            h,
            nv.NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
            nv.NVML_VOLATILE_ECC,
            nv.NVML_MEMORY_LOCATION_SRAM,
        )
        rows = g(gpu, "remapped_rows", "nvmlDeviceGetRemappedRows", h)
        reading: dict[str, Any] = {
            "temp_c": float(temp or 0),
            "power_w": (power or 0) / 1000.0,
            "sm_clock_mhz": int(g(gpu, "sm_clock_mhz", "nvmlDeviceGetClockInfo", h, nv.NVML_CLOCK_SM) or 0),
            "util_pct": float(util.gpu) if util is not None else 0.0,
            "ecc_sbe": self._delta(gpu, "ecc_sbe", sbe),
            "ecc_dbe": self._delta(gpu, "ecc_dbe", dbe),
            "pcie_replay": self._delta(
                gpu, "pcie_replay", g(gpu, "pcie_replay", "nvmlDeviceGetPcieReplayCounter", h)
            ),
            "pcie_link_gen": int(g(gpu, "pcie_link_gen", "nvmlDeviceGetCurrPcieLinkGeneration", h) or 0),
            "pcie_link_width": int(g(gpu, "pcie_link_width", "nvmlDeviceGetCurrPcieLinkWidth", h) or 0),
            "pcie_link_gen_max": g(gpu, "pcie_link_gen_max", "nvmlDeviceGetMaxPcieLinkGeneration", h),
            "pcie_link_width_max": g(gpu, "pcie_link_width_max", "nvmlDeviceGetMaxPcieLinkWidth", h),
            "nvlink_errors": self._nvlink(gpu, h),
            "throttle_reasons": self._throttle(gpu, h),
            "retired_pages": int(rows[0] + rows[1]) if rows is not None else 0,
        }
        obs.gpus[gpu] = reading
        sram_new = self._delta(gpu, "ecc_sram_dbe", sram)
        self._ecc_facts(gpu, now_ms, reading, sram_new, rows, obs)

    def _ecc_facts(
        self, gpu: int, now_ms: int, r: dict[str, Any], sram_new: int, rows: Any, obs: Observation
    ) -> None:
        unc_new = self._delta(gpu, "unc_rows", rows[1]) if rows is not None else 0
        remap = self.remaps.outcome(
            gpu, bool(rows is not None and rows[3]), unc_new, bool(rows is not None and rows[2])
        )
        obs.facts += ecc_facts(
            gpu,
            now_ms,
            SOURCE,
            dram_uce=max(r["ecc_dbe"] - sram_new, 0),
            sram_uce=sram_new,
            correctable=r["ecc_sbe"],
            row_remap=remap,
            rows_total=r["retired_pages"],
        )

    def _nvlink(self, gpu: int, h: Any) -> int:
        nv = self.nv
        if gpu not in self.links:
            self.links[gpu] = []
            for link in range(int(getattr(nv, "NVML_NVLINK_MAX_LINKS", 18))):
                state = self._get(gpu, "nvlink_state", "nvmlDeviceGetNvLinkState", h, link)
                if state is None:
                    break
                if state == nv.NVML_FEATURE_ENABLED:
                    self.links[gpu].append(link)
        total = 0
        for link in self.links[gpu]:
            for counter in NVLINK_COUNTERS:
                value = self._get(
                    gpu, f"nvlink_counter{counter}", "nvmlDeviceGetNvLinkErrorCounter", h, link, counter
                )
                total += self._delta(gpu, f"nvlink{link}:{counter}", value)
        return total

    def close(self) -> None:
        if self.nv is not None:
            try:
                if self.events is not None:
                    self.nv.nvmlEventSetFree(self.events)
                self.nv.nvmlShutdown()
            except self.nv.NVMLError:
                pass
            self.nv = None


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
