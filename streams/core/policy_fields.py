"""What every table of the policy file is built from: frozen models that refuse unknown keys and take the
keys a file leaves out from the packaged ``policy.toml`` (the one place rule defaults live), and durations
('250ms', '90s', '5m', '24h', '7d', or a bare number of seconds)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict

PACKAGED_FILE = Path(__file__).with_name("policy.toml")
PACKAGED: dict[str, Any] = tomllib.loads(PACKAGED_FILE.read_text())

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


def parse_duration_ms(value: Any) -> int:
    """'90s', '5m', '24h', '7d', '250ms' or a number of seconds -> milliseconds."""
    if isinstance(value, bool):
        raise ValueError(f"invalid duration {value!r}")
    if isinstance(value, int | float):
        if value < 0:
            raise ValueError(f"negative duration {value!r}")
        return int(value * 1000)
    if isinstance(value, str):
        match = _DURATION.match(value)
        if match:
            return int(float(match.group(1)) * _UNIT_MS[match.group(2) or "s"])
    raise ValueError(f"invalid duration {value!r} (use e.g. '90s', '5m', '24h', '7d')")


DurationMs = Annotated[int, BeforeValidator(parse_duration_ms)]


class PolicyModel(BaseModel):
    """A table of the policy: frozen, a key it does not know is an error (a typo is not a default), and
    its defaults (``packaged``) are validated as a file's values are (durations are parsed)."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)


def packaged(table: str, key: str) -> Any:
    """The packaged file's value of ``key`` in ``table`` ("": the top level): the default of that key."""
    return (PACKAGED[table] if table else PACKAGED)[key]
