"""What every table of the policy file is built from: frozen models that refuse unknown keys and take the
keys a file leaves out from the packaged ``ground/policy.toml`` (the one place rule defaults live, read by
``ground.packaged_policy``), and durations ('250ms', '90s', '5m', '24h', '7d', or a bare number of seconds)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict

from ground.packaged_policy import PACKAGED, PACKAGED_FILE, packaged, parse_duration_ms

__all__ = ["PACKAGED", "PACKAGED_FILE", "DurationMs", "PolicyModel", "packaged", "parse_duration_ms"]

DurationMs = Annotated[int, BeforeValidator(parse_duration_ms)]


class PolicyModel(BaseModel):
    """A table of the policy: frozen, a key it does not know is an error (a typo is not a default), and
    its defaults (``packaged``) are validated as a file's values are (durations are parsed)."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)
