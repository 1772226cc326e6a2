"""The policy file's ``[degraded]`` table: the bounds of the degraded-telemetry rule (``ground.degraded``).

Every runner's samples fold reads them from the packaged file before any policy is at hand, so a policy file
may restate the packaged values but not change them: a different value is refused at load time, not ignored.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, ValidationInfo, field_validator

from streams.core.policy_fields import PolicyModel, packaged


class DegradedPolicy(PolicyModel):
    """GPU throttle reasons, the NIC port drop and its quorum, and the share of a window's samples that makes
    a host alone in its job slow (``ground.slow_peers.TELEMETRY_SHARE``)."""

    throttle_mask: int = Field(packaged("degraded", "throttle_mask"), ge=1)
    port_drop: float = Field(packaged("degraded", "port_drop"), gt=0, lt=1)
    min_ports: int = Field(packaged("degraded", "min_ports"), ge=1)
    telemetry_share: float = Field(packaged("degraded", "telemetry_share"), gt=0, le=1)

    @field_validator("*")
    @classmethod
    def _packaged_only(cls, value: Any, info: ValidationInfo) -> Any:
        want = packaged("degraded", info.field_name or "")
        if value != want:
            raise ValueError(
                f"{value!r} differs from the packaged {want!r}: every runner reads the degraded-telemetry "
                "rule from ground/policy.toml, so a policy file cannot change it"
            )
        return value
