"""Detector and webhook settings (sections ``[detect]`` and ``[webhooks]``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class DetectSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    app_id: str = "fleetpulse-detect"


class WebhookSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    urls: list[str] = []
