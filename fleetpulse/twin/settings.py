"""The twin's own settings: what repairs cure, how long they take, and the jobs the fleet runs.

Not policy (the policy under test is ``ground/policy.toml``): these describe the fleet's answer.
Defaults, and where they come from:
- cure probabilities: assumed; AIReSim (arXiv 2603.07041) makes repair failure a parameter of the
  same shape. A part swap that fits the fault cures it most of the time; a mismatched operation
  (a reboot for a bad HBM stack) never does. Set them from your own RMA re-failure records.
- repair times: lognormal per operation, medians as the planner's defaults (ground/policy.toml:
  RMA 5 d, NIC or cable 1 d, reboot 1 h, diagnostics 4 h), spread σ = 0.5 (assumed).
- checkpoint every hour, 1 min to save, 10 min to restart: of the order Kokolis et al. (HPCA 2025)
  describe for large research-cluster jobs; assumed, not measured.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from fleetpulse.twin.errors import TwinError

# operation -> persistent fault (lemon kind or slow cause) -> probability the repair removes it
DEFAULT_CURE: dict[str, dict[str, float]] = {
    "rma": {
        "dram_uce": 0.9,
        "fell_off_bus": 0.9,
        "sram_uce": 0.9,
        "link_flap": 0.5,
        "degraded_nic": 0.5,
        "pcie_downtraining": 0.8,
        "thermal_throttling": 0.7,
    },
    "cable_replacement": {"link_flap": 0.8},
    "nic_replacement": {"link_flap": 0.5, "degraded_nic": 0.9},
    "reboot": {"pcie_downtraining": 0.3},
    "diagnostics": {"pcie_downtraining": 0.3, "thermal_throttling": 0.5},
}
DEFAULT_REPAIR_MEDIAN_H: dict[str, float] = {
    "rma": 120.0,
    "nic_replacement": 24.0,
    "cable_replacement": 24.0,
    "reboot": 1.0,
    "diagnostics": 4.0,
}


class TwinSettings(BaseModel):
    """Frozen: built once at the entry point (``--twin-set`` may change a field)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cure: dict[str, dict[str, float]] = Field(
        default_factory=lambda: {k: dict(v) for k, v in DEFAULT_CURE.items()}
    )
    repair_median_h: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_REPAIR_MEDIAN_H))
    repair_sigma: float = Field(0.5, ge=0)
    job_length_days: float | None = Field(None, gt=0, description="None: jobs run through the horizon")
    checkpoint_interval_h: float = Field(1.0, gt=0)
    checkpoint_save_min: float = Field(1.0, ge=0)
    restart_min: float = Field(10.0, ge=0)
    spare_pct: float = Field(0.0, ge=0, lt=100, description="share of each cluster's hosts kept out of jobs")
    sample_interval_min: float = Field(
        0.0,
        ge=0,
        description="hosts in service send HostSampled this often (0: none, no slow-host detection)",
    )
    lemon_max_repeats: int = Field(1000, ge=1, description="a lemon keeps failing until a repair cures it")

    @model_validator(mode="after")
    def _check(self) -> TwinSettings:
        for op, cures in self.cure.items():
            bad = {k: p for k, p in cures.items() if not 0 <= p <= 1}
            if bad:
                raise ValueError(f"cure.{op}: probabilities must be in [0, 1], got {bad}")
        return self

    @property
    def length_h(self) -> float:
        return math.inf if self.job_length_days is None else self.job_length_days * 24.0

    def cure_probability(self, operation: str, fault: str) -> float:
        return self.cure.get(operation, {}).get(fault, 0.0)

    def repair_median(self, operation: str) -> float:
        return self.repair_median_h.get(operation, 24.0)


def twin_settings(changes: dict[str, Any] | None = None) -> TwinSettings:
    """The defaults with ``changes`` applied (a TwinError says which setting is bad)."""
    try:
        return TwinSettings(**(changes or {}))
    except ValueError as exc:
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        raise TwinError(f"bad twin setting: {' '.join(lines[1:3])}") from exc


def parse_twin_sets(texts: Iterable[str]) -> dict[str, Any]:
    """``KEY=VALUE`` options (the value read as TOML: ``5``, ``true``, ``{rma={dram_uce=0.5}}``)."""
    out: dict[str, Any] = {}
    for text in texts:
        key, sep, value = text.partition("=")
        if not sep or not key.strip():
            raise TwinError(f"bad --twin-set {text!r}: want KEY=VALUE, e.g. spare_pct=5")
        try:
            out[key.strip()] = tomllib.loads(f"v = {value.strip()}")["v"]
        except tomllib.TOMLDecodeError as exc:
            raise TwinError(f"bad --twin-set {text!r}: {value!r} is not a TOML value ({exc})") from exc
    return out
