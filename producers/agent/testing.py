"""A fixture host for tests, benchmarks and the compose demo: a sysfs tree, a kmsg file and a fake ``pynvml``.

``FixtureHost`` writes what the real kernel exposes (same paths, same formats) under a folder, and
changes it the way faults do: a GPU falling off the bus, an InfiniBand port flapping, AER counts.
``fake_pynvml`` builds a module with NVML's names that plays GPU states, NOT_SUPPORTED and a lost GPU.
"""

from __future__ import annotations

import shutil
import time
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ground.settings.agent import AgentSettings, KernelLogSettings
from producers.pci_layout import PCI_BUS_IDS

GPU_BUSES = PCI_BUS_IDS  # the simulator's host layout: its events and these files name the same GPUs
NIC_BUSES = (
    "0000:1a:00.0",
    "0000:2c:00.0",
    "0000:3c:00.0",
    "0000:5f:00.0",
    "0000:9c:00.0",
    "0000:ad:00.0",
    "0000:bc:00.0",
    "0000:dd:00.0",
)
IB_COUNTERS = ("port_rcv_data", "port_xmit_data", "symbol_error", "link_downed", "link_error_recovery")
AER_NAMES = {
    "aer_dev_correctable": ("RxErr", "BadTLP", "BadDLLP", "Rollover", "Timeout", "NonFatalErr"),
    "aer_dev_nonfatal": ("Undefined", "DLP", "SDES", "TLP", "FCP", "CmpltTO", "UnxCmplt", "MalfTLP"),
    "aer_dev_fatal": ("Undefined", "DLP", "SDES", "TLP", "FCP", "CmpltTO", "UnxCmplt", "MalfTLP"),
}


class FixtureHost:
    """A host's /sys, /dev/kmsg and boot id under ``root`` (built anew, also over an earlier one)."""

    def __init__(self, root: Path, gpus: int = 8, nics: int = 8, link_layer: str = "InfiniBand") -> None:
        self.root = root
        self.sys = root / "sys"
        self.kmsg = root / "kmsg"
        self.boot_id = root / "boot_id"
        self.seq = 0
        self.boot_id.parent.mkdir(parents=True, exist_ok=True)
        self.boot_id.write_text("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\n")
        self.kmsg.write_text("")
        for bus in GPU_BUSES[:gpus]:
            dev = self.pci(bus)
            (dev / "vendor").write_text("0x10de\n")
            (dev / "class").write_text("0x030200\n")
            for name in AER_NAMES:
                self.set_aer(bus, name, {})
        for i, bus in enumerate(NIC_BUSES[:nics]):
            dev = self.pci(bus)
            (dev / "vendor").write_text("0x15b3\n")
            (dev / "class").write_text("0x020700\n")
            ib = self.sys / "class" / "infiniband" / f"mlx5_{i}"
            port = ib / "ports" / "1"
            (port / "counters").mkdir(parents=True, exist_ok=True)
            if not (ib / "device").is_symlink():
                (ib / "device").symlink_to(dev)
            (port / "link_layer").write_text(f"{link_layer}\n")
            (port / "phys_state").write_text("5: LinkUp\n")
            (port / "state").write_text("4: ACTIVE\n")
            for name in IB_COUNTERS:
                (port / "counters" / name).write_text("0\n")
            (ib / "fw_ver").write_text("28.39.1002\n")
        self.os_release = root / "os-release"
        self.os_release.write_text('NAME="Ubuntu"\nVERSION_ID="22.04"\nPRETTY_NAME="Ubuntu 22.04.4 LTS"\n')

    def pci(self, bus: str) -> Path:
        dev = self.sys / "bus" / "pci" / "devices" / bus
        dev.mkdir(parents=True, exist_ok=True)
        return dev

    def port_dir(self, nic: int) -> Path:
        return self.sys / "class" / "infiniband" / f"mlx5_{nic}" / "ports" / "1"

    def counter(self, nic: int, name: str) -> int:
        return int((self.port_dir(nic) / "counters" / name).read_text())

    def set_counter(self, nic: int, name: str, value: int) -> None:
        (self.port_dir(nic) / "counters" / name).write_text(f"{value}\n")

    def add_counter(self, nic: int, name: str, by: int) -> None:
        self.set_counter(nic, name, self.counter(nic, name) + by)

    def set_state(self, nic: int, active: bool) -> None:
        (self.port_dir(nic) / "state").write_text("4: ACTIVE\n" if active else "1: DOWN\n")

    def flap(self, nic: int, times: int = 1) -> None:
        """The port went down and came back ``times`` times between two polls."""
        self.add_counter(nic, "link_downed", times)

    def lose_nic(self, nic: int) -> None:
        """The adapter fell off the bus: its RDMA device leaves ``class/infiniband``."""
        shutil.rmtree(self.sys / "class" / "infiniband" / f"mlx5_{nic}")

    def set_aer(self, bus: str, filename: str, counts: dict[str, int]) -> None:
        names = AER_NAMES[filename]
        total = sum(counts.values())
        lines = [f"{n} {counts.get(n, 0)}" for n in names]
        lines.append(
            f"TOTAL_ERR_{'COR' if 'correctable' in filename else filename.split('_')[-1].upper()} {total}"
        )
        (self.pci(bus) / filename).write_text("\n".join(lines) + "\n")

    def log(self, message: str, ts_us: int | None = None, priority: int = 4) -> int:
        """Append one kmsg record stamped now (microseconds since boot, as the kernel does); its sequence number."""
        self.seq += 1
        stamp = ts_us if ts_us is not None else int(time.clock_gettime(time.CLOCK_BOOTTIME) * 1e6)
        with self.kmsg.open("a") as f:
            f.write(f"{priority},{self.seq},{stamp},-;{message}\n")
        return self.seq

    def fall_off_bus(self, gpu: int) -> int:
        bus = GPU_BUSES[gpu][:-2]
        return self.log(
            f"NVRM: Xid (PCI:{bus}): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
        )

    def agent_settings(self, state_dir: Path, **overrides: Any) -> Any:
        kernel = KernelLogSettings(kmsg_path=self.kmsg, boot_id_path=self.boot_id, journalctl=False)
        base: dict[str, Any] = {
            "host_id": "fx-h00001",
            "cluster": "fx",
            "rack": "fx-rack0001",
            "maintenance_domain": "fx-md000",
            "sysfs_root": self.sys,
            "state_dir": state_dir,
            "kernel_log": kernel,
            "step_time": {"enabled": False},
            "nvml": {"enabled": False},
            "versions": {"enabled": False, "os_release": self.os_release},
        }
        return AgentSettings.model_validate({**base, **overrides})


@dataclass
class FakeGpu:
    uuid: str
    bus: str
    values: dict[str, Any] = field(default_factory=dict)
    lost: bool = False


class NVMLError(Exception):
    def __init__(self, value: int) -> None:
        super().__init__(f"NVML error {value}")
        self.value = value


def fake_pynvml(
    gpus: int = 8, not_supported: frozenset[str] = frozenset(), absent: frozenset[str] = frozenset()
) -> types.ModuleType:
    """A module with pynvml's names over ``gpus`` healthy H100s; ``mod.gpus[i]`` changes what they report.

    ``not_supported``: functions that answer NVML_ERROR_NOT_SUPPORTED; ``absent``: functions an older
    nvidia-ml-py lacks (``nvmlDeviceGetCurrentClocksEventReasons`` came with 12.535)."""
    m = types.ModuleType("pynvml")
    m.NVMLError = NVMLError  # type: ignore[attr-defined]
    consts = {
        "NVML_ERROR_NOT_SUPPORTED": 3,
        "NVML_ERROR_TIMEOUT": 10,
        "NVML_ERROR_FUNCTION_NOT_FOUND": 13,
        "NVML_ERROR_GPU_IS_LOST": 15,
        "nvmlClocksEventReasonGpuIdle": 0x1,
        "nvmlClocksEventReasonSwPowerCap": 0x4,
        "nvmlClocksEventReasonHwSlowdown": 0x8,
        "nvmlClocksEventReasonSwThermalSlowdown": 0x20,
        "nvmlClocksEventReasonHwThermalSlowdown": 0x40,
        "NVML_TEMPERATURE_GPU": 0,
        "NVML_CLOCK_SM": 1,
        "NVML_MEMORY_ERROR_TYPE_CORRECTED": 0,
        "NVML_MEMORY_ERROR_TYPE_UNCORRECTED": 1,
        "NVML_VOLATILE_ECC": 0,
        "NVML_AGGREGATE_ECC": 1,
        "NVML_MEMORY_LOCATION_SRAM": 7,
        "NVML_NVLINK_MAX_LINKS": 18,
        "NVML_FEATURE_ENABLED": 1,
        "nvmlEventTypeXidCriticalError": 8,
    }
    for name, value in consts.items():
        setattr(m, name, value)
    state = [
        FakeGpu(
            f"GPU-{i:08x}-0000-4000-8000-00000000000{i}",
            GPU_BUSES[i],
            {
                "temp": 60 + i,
                "power_mw": 650_000,
                "sm": 1980,
                "util": 96,
                "sbe": 0,
                "dbe": 0,
                "sram": 0,
                "rows": (0, 0, 0, 0),
                "replay": 0,
                "gen": 5,
                "width": 16,
                "gen_max": 5,
                "width_max": 16,
                "throttle": 0,
                "nvlink": 0,
            },
        )
        for i in range(gpus)
    ]
    m.gpus = state  # type: ignore[attr-defined]
    m.driver_version = "550.54.15"  # type: ignore[attr-defined]  # a test changes it as an upgrade would
    m.xid_queue = []  # type: ignore[attr-defined]
    m.calls = 0  # type: ignore[attr-defined]

    def api(name: str, key: Any) -> None:
        def call(*args: Any) -> Any:
            m.calls += 1  # type: ignore[attr-defined]
            if name in not_supported:
                raise NVMLError(3)
            gpu = args[0] if args and isinstance(args[0], FakeGpu) else None
            if gpu is not None and gpu.lost:
                raise NVMLError(15)
            return key(*args)

        setattr(m, name, call)

    def wait(es: Any, timeout_ms: int) -> Any:
        if not m.xid_queue:  # type: ignore[attr-defined]
            raise NVMLError(10)
        gpu, code = m.xid_queue.pop(0)  # type: ignore[attr-defined]
        return types.SimpleNamespace(
            device=state[gpu], eventData=code, eventType=8, gpuInstanceId=0, computeInstanceId=0
        )

    v = lambda k: lambda h, *a: h.values[k]  # noqa: E731

    def total_ecc(h: FakeGpu, kind: int, counter: int) -> int:
        if counter == 0 and not h.values.get("volatile", True):  # some GPUs keep aggregate counts only
            raise NVMLError(3)
        return int(h.values["sbe" if kind == 0 else "dbe"])

    table = {
        "nvmlInit": lambda: None,
        "nvmlShutdown": lambda: None,
        "nvmlDeviceGetCount": lambda: len(state),
        "nvmlDeviceGetHandleByIndex": lambda i: state[i],
        "nvmlSystemGetDriverVersion": lambda: m.driver_version,  # type: ignore[attr-defined]
        "nvmlSystemGetCudaDriverVersion": lambda: 12040,
        "nvmlDeviceGetVbiosVersion": lambda h: "96.00.99.00.01",
        "nvmlDeviceGetInforomImageVersion": lambda h: "G520.0200.00.05",
        "nvmlDeviceGetPciInfo": lambda h: types.SimpleNamespace(busId=("0000" + h.bus).encode()),
        "nvmlDeviceGetUUID": lambda h: h.uuid,
        "nvmlDeviceGetSerial": lambda h: f"1650{h.uuid[4:12]}",
        "nvmlDeviceGetName": lambda h: "NVIDIA H100 80GB HBM3",
        "nvmlEventSetCreate": lambda: object(),
        "nvmlDeviceGetSupportedEventTypes": lambda h: 0xF,
        "nvmlDeviceRegisterEvents": lambda h, t, es: None,
        "nvmlEventSetWait_v2": wait,
        "nvmlEventSetFree": lambda es: None,
        "nvmlDeviceGetTemperature": v("temp"),
        "nvmlDeviceGetPowerUsage": v("power_mw"),
        "nvmlDeviceGetClockInfo": v("sm"),
        "nvmlDeviceGetPcieReplayCounter": v("replay"),
        "nvmlDeviceGetUtilizationRates": lambda h: types.SimpleNamespace(gpu=h.values["util"], memory=40),
        "nvmlDeviceGetTotalEccErrors": total_ecc,
        "nvmlDeviceGetMemoryErrorCounter": lambda h, kind, counter, where: h.values["sram"],
        "nvmlDeviceGetRemappedRows": v("rows"),
        "nvmlDeviceGetCurrPcieLinkGeneration": v("gen"),
        "nvmlDeviceGetCurrPcieLinkWidth": v("width"),
        "nvmlDeviceGetMaxPcieLinkGeneration": v("gen_max"),
        "nvmlDeviceGetMaxPcieLinkWidth": v("width_max"),
        "nvmlDeviceGetCurrentClocksEventReasons": v("throttle"),
        "nvmlDeviceGetCurrentClocksThrottleReasons": v("throttle"),  # deprecated name, same bits
        "nvmlDeviceGetNvLinkState": lambda h, link: 1,
        "nvmlDeviceGetNvLinkErrorCounter": lambda h, link, c: (
            h.values["nvlink"] if (link, c) == (0, 2) else 0
        ),
    }
    for name, fn in table.items():
        if name not in absent:
            api(name, fn)
    return m
