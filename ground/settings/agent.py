"""Host agent settings (section ``[agent]`` / ``FLEETPULSE_AGENT__*``): identity, sources, timing, spool.

Every path is a setting so the same code reads fixture trees in tests and the real ones on a host.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class KernelLogSettings(_Section):
    enabled: bool = True
    kmsg_path: Path = Path("/dev/kmsg")
    journalctl: bool = Field(True, description="follow `journalctl -k` where kmsg_path is not readable")
    boot_id_path: Path = Path("/proc/sys/kernel/random/boot_id")
    interval_s: float = Field(1.0, gt=0)


class NvmlSettings(_Section):
    enabled: bool = True
    interval_s: float = Field(10.0, gt=0)
    event_wait_ms: int = Field(0, ge=0, description="how long one round waits on the XID event set")


class InfinibandSettings(_Section):
    enabled: bool = True
    interval_s: float = Field(1.0, gt=0)
    symbol_error_threshold: int = Field(
        10, ge=1, description="symbol errors in one sample interval that make a symbol_errors event"
    )


class AerSettings(_Section):
    enabled: bool = True
    interval_s: float = Field(1.0, gt=0)


class DcgmSettings(_Section):
    enabled: bool = False
    url: str = "http://127.0.0.1:9400/metrics"
    interval_s: float = Field(10.0, gt=0)
    timeout_s: float = Field(2.0, gt=0)


class VersionsSettings(_Section):
    enabled: bool = True
    interval_s: float = Field(
        60.0, gt=0, description="how often versions are read (reported when one changes)"
    )
    os_release: Path = Path("/etc/os-release")


class StepTimeSettings(_Section):
    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = Field(9477, ge=0, le=65535, description="UDP port report_step() sends to (0: any free port)")


class SpoolSettings(_Section):
    max_bytes: int = Field(256 * 1024 * 1024, ge=64 * 1024, description="samples are dropped first when full")
    send_batch: int = Field(500, ge=1)
    flush_timeout_s: float = Field(5.0, gt=0)


class AgentSettings(_Section):
    """What a host agent reads, how often, and who it says it is."""

    host_id: str | None = Field(None, description="default: the host name")
    cluster: str = "default"
    rack: str = "unknown"
    maintenance_domain: str = "unknown"
    sku: str | None = Field(None, description="default: the GPU name NVML reports, else 'unknown'")
    fabric: str | None = Field(None, description="'infiniband' or 'roce'; default: from link_layer")
    install_ts: int | None = Field(None, description="epoch ms; default: the agent's first start on the host")
    sysfs_root: Path = Path("/sys")
    state_dir: Path = Path("/var/lib/fleetpulse-agent")
    sample_interval_s: int = Field(10, ge=1, description="HostSampled interval")
    tick_s: float = Field(1.0, gt=0, description="how often the loop wakes to poll due collectors")
    xid_dedup_s: float = Field(
        30.0, ge=0, description="a second source's XID within this window is the same one"
    )
    kernel_log: KernelLogSettings = KernelLogSettings()
    nvml: NvmlSettings = NvmlSettings()
    infiniband: InfinibandSettings = InfinibandSettings()
    aer: AerSettings = AerSettings()
    dcgm: DcgmSettings = DcgmSettings()
    step_time: StepTimeSettings = StepTimeSettings()
    versions: VersionsSettings = VersionsSettings()
    spool: SpoolSettings = SpoolSettings()
