"""The fleet model's configuration: shape, ages, failure processes, lemons, slow hosts, noise.

A preset (``producers/presets/<name>.toml``) or any TOML file with the same sections
validates into one frozen ``FleetConfig``; defaults are the Llama 3 / Meta figures.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from producers.changes import VersionsSpec
from producers.errors import FleetConfigError
from schemas.published import LLAMA3_CAUSE_MIX, LLAMA3_RATE_PER_GPU_DAY
from schemas.taxonomy import FaultKind

PRESET_DIR = Path(__file__).parent / "presets"

Fabric = Literal["roce", "infiniband"]
LemonKind = Literal["dram_uce", "fell_off_bus", "sram_uce", "link_flap"]
SlowCause = Literal["degraded_nic", "pcie_downtraining", "thermal_throttling"]


# Which fault kinds realise each cause (a cause without hardware signal is its own kind).
DEFAULT_CAUSE_KINDS: dict[str, dict[str, float]] = {
    "faulty_gpu": {"fell_off_bus": 0.5, "nvlink": 0.3, "pmu_halt": 0.2},
    "hbm3": {"dram_uce": 0.85, "row_remap_failure": 0.15},
    "network": {"link_down": 1.0},
    "gpu_sram": {"sram_uce": 1.0},
    "gpu_system_processor": {"gsp_error": 1.0},
    "nic": {"nic": 1.0},
}
DEFAULT_EARLY_LIFE: tuple[FaultKind, ...] = ("fell_off_bus", "link_down")
DEFAULT_LEMON_KINDS: dict[LemonKind, float] = {
    "dram_uce": 0.3,
    "fell_off_bus": 0.3,
    "sram_uce": 0.15,
    "link_flap": 0.25,
}
DEFAULT_SLOW_CAUSES: dict[SlowCause, float] = {
    "degraded_nic": 0.4,
    "pcie_downtraining": 0.3,
    "thermal_throttling": 0.3,
}


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ClusterSpec(_Frozen):
    name: str
    fabric: Fabric
    hosts: int = Field(ge=1)


class InstallSpec(_Frozen):
    """Cohorts of racks arriving over time, some during the simulated period, so many ages are seen."""

    history_days: float = Field(360.0, ge=0, description="oldest cohort arrived this long before start")
    cohorts_per_cluster: int = Field(12, ge=1)
    arriving_fraction: float = Field(0.2, ge=0, le=1, description="share of cohorts arriving during the run")
    arrival_window: float = Field(0.5, gt=0, le=1, description="... within this leading share of the run")
    jitter_hours: float = Field(48.0, ge=0, description="spread of install times within a cohort")


class FabricSpec(_Frozen):
    step_time_ms: float = Field(gt=0)
    bus_bw_gbps: float = Field(gt=0)
    symbol_errors_per_port_s: float = Field(ge=0)
    link_fault_weight: float = Field(
        1.0, gt=0, description="relative rate of link faults (normalised fleet-wide)"
    )
    noise_flaps_per_port_day: float = Field(ge=0)


def _default_fabrics() -> dict[Fabric, FabricSpec]:
    return {
        "roce": FabricSpec(
            step_time_ms=1000.0,
            bus_bw_gbps=360.0,
            symbol_errors_per_port_s=0.02,
            link_fault_weight=1.3,
            noise_flaps_per_port_day=0.004,
        ),
        "infiniband": FabricSpec(
            step_time_ms=990.0,
            bus_bw_gbps=372.0,
            symbol_errors_per_port_s=0.005,
            link_fault_weight=0.7,
            noise_flaps_per_port_day=0.002,
        ),
    }


class FailureSpec(_Frozen):
    """Interruption rate and mix; early-life kinds follow a power-law (Weibull-intensity) process in age."""

    interruptions_per_gpu_day: float = Field(LLAMA3_RATE_PER_GPU_DAY, gt=0)
    cause_mix: dict[str, float] = Field(default_factory=lambda: dict(LLAMA3_CAUSE_MIX))
    cause_kinds: dict[str, dict[str, float]] = Field(default_factory=lambda: dict(DEFAULT_CAUSE_KINDS))
    early_life_kinds: list[FaultKind] = Field(default_factory=lambda: list(DEFAULT_EARLY_LIFE))
    weibull_shape: float = Field(0.7, gt=0, lt=1)
    weibull_scale_days: float | None = Field(
        None, gt=0, description="None: calibrate so early-life kinds keep their share of the mix"
    )
    wearout_shape: float = Field(4.0, gt=1)
    wearout_scale_days: float | None = Field(2500.0, gt=0, description="None disables the wear-out term")
    host_only_fraction: float = Field(
        0.0,
        ge=0,
        le=1,
        description="share of hosts whose faults are reported naming only the host, not the GPU or port "
        "(as many real incident records are): the per-GPU and per-port rules cannot see them",
    )
    guard_days: float = Field(
        0.0,
        ge=0,
        description="opt-in: non-lemon repeats on one GPU/port within this many days are dropped "
        "(0: faults on healthy parts are independent, chance repeats happen at the hazard's rate)",
    )

    @model_validator(mode="after")
    def _check(self) -> FailureSpec:
        for cause, kinds in self.cause_kinds.items():
            if cause not in self.cause_mix:
                raise ValueError(f"cause_kinds names cause {cause!r} missing from cause_mix")
            if not kinds or any(w < 0 for w in kinds.values()) or sum(kinds.values()) <= 0:
                raise ValueError(f"cause_kinds.{cause} needs positive weights")
        if any(w < 0 for w in self.cause_mix.values()) or sum(self.cause_mix.values()) <= 0:
            raise ValueError("cause_mix needs non-negative weights with a positive sum")
        return self


class LemonSpec(_Frozen):
    fraction: float = Field(0.015, ge=0, le=1)
    kinds: dict[LemonKind, float] = Field(default_factory=lambda: dict(DEFAULT_LEMON_KINDS))
    repeat_days: tuple[float, float] = (1.0, 3.0)
    max_repeats: int = Field(8, ge=1, description="after this many repeats the host is assumed pulled")
    onset_window: float = Field(0.6, gt=0, le=1, description="onsets fall in this leading share of the run")
    flaps_per_burst: tuple[int, int] = (3, 6)
    burst_minutes: float = Field(90.0, gt=0)


class SlowSpec(_Frozen):
    """Persistent slow hosts lose ``factor``; intermittent ones lose ``intermittent_factor`` in episodes."""

    fraction: float = Field(0.03, ge=0, le=1)
    factor: tuple[float, float] = (0.03, 0.30)
    causes: dict[SlowCause, float] = Field(default_factory=lambda: dict(DEFAULT_SLOW_CAUSES))
    slow_at_start: float = Field(0.5, ge=0, le=1, description="share already slow when the run starts")
    onset_window: float = Field(0.5, gt=0, le=1)
    intermittent_fraction: float = Field(0.4, ge=0, le=1)
    intermittent_factor: tuple[float, float] = (0.02, 0.06)
    duty: tuple[float, float] = (0.3, 0.7)
    episode_minutes: float = Field(
        30.0, gt=0, description="an intermittent host is slow or not for whole episodes of this length"
    )


class NoiseSpec(_Frozen):
    """Events that are not faults; rates per GPU-day or host-day, none of a repeat-offender class."""

    correctable_ecc_per_gpu_day: float = Field(0.05, ge=0)
    app_xid_per_host_day: float = Field(0.1, ge=0)
    correctable_aer_per_gpu_day: float = Field(0.02, ge=0)
    step_noise_sd: float = Field(0.01, ge=0, description="relative sd of a 10 s step time sample")
    host_offset_sd: float = Field(0.003, ge=0, description="persistent per-host relative offset")


class JobSpec(_Frozen):
    """Job slots of ``sizes_hosts`` hosts; each runs jobs one after another, each at its own pace.

    A job's step time is the fabric's times a pace drawn from ``pace`` (another model, another
    batch size), its bus bandwidth the fabric's times one from ``bw_pace``; between jobs the
    slot's hosts idle (no job, no step time) for an exponential gap of mean ``idle_hours``.
    Each cluster's last hosts are ``small_share`` in jobs of 1-3 hosts (``small_sizes``) and
    ``spare_share`` spares that never run a job; both 0 unless a preset sets them.
    """

    sizes_hosts: list[int] = Field(default_factory=lambda: [512, 256, 128, 64, 32, 16, 8, 4, 2, 1])
    small_share: float = Field(
        0.0,
        ge=0,
        le=1,
        description="share of each cluster's hosts in small jobs of small_sizes (laid out last)",
    )
    small_sizes: list[int] = Field(default_factory=lambda: [1, 2, 3], min_length=1)
    spare_share: float = Field(
        0.0, ge=0, le=1, description="share of each cluster's hosts that never run a job"
    )
    pace: tuple[float, float] = (0.6, 1.8)
    bw_pace: tuple[float, float] = (0.8, 1.05)
    run_days: float = Field(4.0, gt=0, description="mean length of a job (exponential, at least an hour)")
    idle_hours: float = Field(2.0, ge=0, description="mean idle gap between jobs on a slot (0: none)")

    @model_validator(mode="after")
    def _check(self) -> JobSpec:
        if self.small_share + self.spare_share > 1:
            raise ValueError("jobs.small_share + jobs.spare_share must not exceed 1")
        if min(self.small_sizes) < 1 or min(self.sizes_hosts, default=1) < 1:
            raise ValueError("jobs.sizes_hosts and jobs.small_sizes must be at least 1 host")
        for name in ("pace", "bw_pace"):
            lo, hi = getattr(self, name)
            if not 0 < lo <= hi:
                raise ValueError(f"jobs.{name} must be 0 < low <= high")
        return self


class FleetConfig(_Frozen):
    name: str
    sku: str = "H100-SXM5-80GB"
    gpus_per_host: Literal[8] = 8
    nic_ports: Literal[8] = 8
    hosts_per_rack: int = Field(2, ge=1)
    racks_per_domain: int = Field(8, ge=1)
    clusters: list[ClusterSpec] = Field(min_length=1)
    install: InstallSpec = InstallSpec()
    fabrics: dict[Fabric, FabricSpec] = Field(default_factory=_default_fabrics)
    failures: FailureSpec = FailureSpec()
    lemons: LemonSpec = LemonSpec()
    slow: SlowSpec = SlowSpec()
    noise: NoiseSpec = NoiseSpec()
    jobs: JobSpec = JobSpec()
    versions: VersionsSpec = VersionsSpec()

    @model_validator(mode="after")
    def _check(self) -> FleetConfig:
        names = [c.name for c in self.clusters]
        if len(set(names)) != len(names):
            raise ValueError(f"cluster names must be unique: {names}")
        missing = {c.fabric for c in self.clusters} - set(self.fabrics)
        if missing:
            raise ValueError(f"no [fabrics.*] section for {sorted(missing)}")
        return self

    @property
    def n_hosts(self) -> int:
        return sum(c.hosts for c in self.clusters)


def available_presets() -> list[str]:
    return sorted(p.stem for p in PRESET_DIR.glob("*.toml"))


def load_fleet_config(preset: str | None = None, path: Path | None = None) -> FleetConfig:
    """A preset by name, or a TOML file (``path`` wins); FleetConfigError says what is wrong."""
    if path is None:
        name = preset or "small"
        path = PRESET_DIR / f"{name}.toml"
        if not path.is_file():
            raise FleetConfigError(
                f"unknown fleet preset {name!r}; choose one of {', '.join(available_presets())}"
            )
    elif not path.is_file():
        raise FleetConfigError(f"fleet config file {path} does not exist")
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise FleetConfigError(f"cannot read TOML: {exc}", str(path)) from exc
    data.setdefault("name", path.stem)
    try:
        return FleetConfig.model_validate(data)
    except ValidationError as exc:
        lines = [f"  {'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]
        raise FleetConfigError("invalid fleet config:\n" + "\n".join(lines), str(path)) from exc
