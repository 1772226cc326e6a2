"""Versions collector: the host's driver, CUDA driver, VBIOS, InfoROM, NIC firmware, kernel and OS image.

Change campaigns verify a host by what it reports (``HostVersionsReported``): NVML for the GPU side
(``nvmlSystemGetDriverVersion``, ``nvmlSystemGetCudaDriverVersion``, ``nvmlDeviceGetVbiosVersion``,
``nvmlDeviceGetInforomImageVersion``), ``/sys/class/infiniband/*/fw_ver`` for the NICs, ``uname -r``
and ``/etc/os-release``. Where the GPUs or NICs disagree the lowest version is reported: a campaign
is done on a host only when every unit has the new version. A source that is missing is null.
"""

from __future__ import annotations

import contextlib
import platform
from collections.abc import Callable
from functools import partial
from types import ModuleType
from typing import Any

from ground.settings.agent import VersionsSettings
from producers.agent.collector import Observation, Problems
from producers.agent.nvml import init_nvml
from producers.agent.sysfs import SysfsReader

SOURCE = "versions"


def version_key(version: str) -> tuple[tuple[int, str], ...]:
    """Sort key comparing dotted versions part by part, numbers as numbers (``9.1`` < ``10.0``)."""
    parts = version.replace("-", ".").split(".")
    return tuple((int(p), "") if p.isdigit() else (-1, p) for p in parts)


def lowest(values: list[str]) -> str | None:
    return min(values, key=version_key) if values else None


def cuda_text(value: int) -> str:
    """NVML's CUDA driver version integer (12040) as it is written (12.4)."""
    return f"{value // 1000}.{value % 1000 // 10}"


def os_image(text: str | None) -> str | None:
    """PRETTY_NAME of an os-release file (else NAME VERSION_ID)."""
    if not text:
        return None
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            fields[key.strip()] = value.strip().strip('"')
    return (
        fields.get("PRETTY_NAME")
        or " ".join(v for v in (fields.get("NAME"), fields.get("VERSION_ID")) if v)
        or None
    )


class VersionsCollector:
    name = SOURCE

    def __init__(
        self,
        settings: VersionsSettings,
        reader: SysfsReader,
        problems: Problems,
        nvml: ModuleType | None = None,
        *,
        uname: Callable[[], str] = platform.release,
        use_nvml: bool = True,
    ) -> None:
        """``use_nvml`` False (the agent's NVML is turned off): the GPU side is not asked and stays null."""
        self.settings, self.reader, self.problems = settings, reader, problems
        self.interval_s = settings.interval_s
        self._module = nvml
        self._uname = uname
        self.use_nvml = use_nvml
        self.nv: Any = None

    def state(self) -> dict[str, Any]:
        return {}

    def restore(self, state: dict[str, Any]) -> None:
        pass

    def collect(self, now_ms: int) -> Observation:
        versions: dict[str, str | None] = {**self._gpu(), "nic_firmware": self._nic_firmware()}
        versions["kernel"] = self._uname() or None
        versions["os_image"] = os_image(self.reader.text(self.settings.os_release))
        return Observation(versions=versions)

    def _nvml(self) -> Any:
        if self.nv is None:
            try:
                nv = init_nvml(self._module)
            except Exception as exc:  # ImportError, or NVMLError_LibraryNotFound / DriverNotLoaded
                self.problems.add(SOURCE, "nvml_unavailable", "", f"{type(exc).__name__}: {exc}")
                return None
            self.nv = nv
        return self.nv

    def _gpu(self) -> dict[str, str | None]:
        out: dict[str, str | None] = dict.fromkeys(("driver", "cuda_driver", "vbios", "inforom"))
        nv = self._nvml() if self.use_nvml else None
        if nv is None:
            return out
        out["driver"] = self._ask(nv, "driver", lambda: _text(nv.nvmlSystemGetDriverVersion()))
        out["cuda_driver"] = self._ask(
            nv, "cuda_driver", lambda: cuda_text(int(nv.nvmlSystemGetCudaDriverVersion()))
        )
        handles = self._ask(
            nv, "devices", lambda: [nv.nvmlDeviceGetHandleByIndex(i) for i in range(nv.nvmlDeviceGetCount())]
        )
        vbios: list[str] = []
        inforom: list[str] = []
        for i, h in enumerate(handles or []):
            vbios.append(
                self._ask(nv, f"gpu{i}/vbios", partial(_call_text, nv.nvmlDeviceGetVbiosVersion, h)) or ""
            )
            inforom.append(
                self._ask(nv, f"gpu{i}/inforom", partial(_call_text, nv.nvmlDeviceGetInforomImageVersion, h))
                or ""
            )
        out["vbios"] = lowest([v for v in vbios if v])
        out["inforom"] = lowest([v for v in inforom if v])
        return out

    def _ask(self, nv: Any, what: str, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except (nv.NVMLError, AttributeError, ValueError) as exc:  # AttributeError: an older nvidia-ml-py
            self.problems.add(SOURCE, "unsupported", what, str(exc))
            return None

    def _nic_firmware(self) -> str | None:
        found = []
        for dev in self.reader.listdir(self.reader.root / "class" / "infiniband"):
            fw = self.reader.text(dev / "fw_ver")
            if fw:
                found.append(fw)
        return lowest(found)

    def close(self) -> None:
        if self.nv is not None:
            with contextlib.suppress(self.nv.NVMLError):
                self.nv.nvmlShutdown()
            self.nv = None


def _call_text(fn: Callable[[Any], Any], handle: Any) -> str:
    return _text(fn(handle))


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
