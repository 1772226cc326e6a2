"""Software and firmware versions in the simulated fleet, and what a new version does to its hosts.

Every host starts on the fleet's baseline image (``VersionsSpec.baseline``). A change (``ChangeSpec``)
names a component and version; a bad one multiplies given fault classes' rates by ``rate_factor``
and slows its hosts by ``slowdown_pct``, from ``delay`` after it is applied; a version no change lists
changes nothing. The truth (``changes_truth``) records which is which, so a campaign's halts are scored.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

FaultClass = Literal["xid", "ecc", "link", "slow", "other"]
DEFAULT_BASELINE: dict[str, str] = {
    "driver": "550.54.15",
    "cuda_driver": "12.4",
    "vbios": "96.00.99.00.01",
    "inforom": "G520.0200.00.05",
    "nic_firmware": "28.39.1002",
    "kernel": "5.15.0-105-generic",
    "os_image": "Ubuntu 22.04.4 LTS",
}
# The simulator's fault kinds in the classes a change campaign compares (``streams.trains.safety``).
KIND_CLASS: dict[str, FaultClass] = {
    "fell_off_bus": "xid",
    "gsp_error": "xid",
    "pmu_halt": "xid",
    "nvlink": "xid",
    "dram_uce": "ecc",
    "row_remap_failure": "ecc",
    "sram_uce": "ecc",
    "link_down": "link",
    "link_flap": "link",
    "nic": "link",
}


class ChangeSpec(BaseModel):
    """What a version does once applied (a good change: no factors, no slowdown)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    component: str = "driver"
    version: str
    rate_factor: dict[FaultClass, float] = Field(default_factory=dict)
    slowdown_pct: float = Field(0.0, ge=0, le=90)
    delay_s: float = Field(0.0, ge=0, description="the effect starts this long after the change is applied")

    @property
    def bad(self) -> bool:
        return any(f != 1.0 for f in self.rate_factor.values()) or self.slowdown_pct > 0


class RolloutSpec(BaseModel):
    """A version rolled through the simulated fleet as a train would, domain after domain in name order
    (the simulator runs open-loop: it applies the change on this schedule, see ``producers.rollout``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    component: str = "driver"
    version: str
    start_day: float = Field(0.0, ge=0, description="days after the run's start the first domain gets it")
    domains_per_day: float = Field(1.0, gt=0)
    domains: int | None = Field(None, ge=1, description="how many domains get it (None: every one)")


class VersionsSpec(BaseModel):
    """The baseline image, whether the simulator reports it (``HostVersionsReported`` with each host's
    inventory, and again when a rollout changes it), the known changes with their effects, and the
    rollouts that apply them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    report: bool = False
    baseline: dict[str, str] = Field(default_factory=lambda: dict(DEFAULT_BASELINE))
    changes: list[ChangeSpec] = Field(default_factory=list)
    rollouts: list[RolloutSpec] = Field(default_factory=list)

    def change(self, component: str, version: str) -> ChangeSpec | None:
        return next((c for c in self.changes if (c.component, c.version) == (component, version)), None)


def rate_factor(spec: VersionsSpec, component: str, version: str, fault_class: str, since_ms: float) -> float:
    """The factor on a host's rate of ``fault_class`` ``since_ms`` after ``version`` was applied to it."""
    change = spec.change(component, version)
    if change is None or since_ms < change.delay_s * 1000:
        return 1.0
    return change.rate_factor.get(fault_class, 1.0)  # type: ignore[call-overload,no-any-return]


def slowdown(spec: VersionsSpec, component: str, version: str, since_ms: float) -> float:
    """The fraction a host running ``version`` for ``since_ms`` is slower by (0: not at all)."""
    change = spec.change(component, version)
    if change is None or since_ms < change.delay_s * 1000:
        return 0.0
    return change.slowdown_pct / 100.0


def versions_payload(spec: VersionsSpec) -> dict[str, Any]:
    """The HostVersionsReported payload of a host on the baseline image."""
    return {**dict.fromkeys(DEFAULT_BASELINE), **spec.baseline, "reason": "start", "actor": "simulator"}


def changes_truth(spec: VersionsSpec) -> list[dict[str, Any]]:
    """Which change is good and which is bad, and how (the run's manifest keeps it)."""
    return [
        {
            "component": c.component,
            "version": c.version,
            "verdict": "bad" if c.bad else "good",
            "rate_factor": dict(sorted(c.rate_factor.items())),
            "slowdown_pct": c.slowdown_pct,
            "delay_s": c.delay_s,
        }
        for c in spec.changes
    ]
