"""Lake settings (section ``[lake]`` / ``FLEETPULSE_LAKE__*``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class LakeSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str = "lake"
