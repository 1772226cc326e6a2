"""The packaged detection policy (``ground/policy.toml``): the one place rule defaults live, read once.

It sits in ``ground`` so that every layer reads the same defaults: the policy's tables
(``streams.core.policy``), and the rules a batch job runs without a policy at hand (``ground.slow_peers``,
``ground.domain_buffer``). Plain data and duration parsing, no validation (that is ``streams.core.policy``'s).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

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


def packaged(table: str, key: str) -> Any:
    """The packaged file's value of ``key`` in ``table`` ("": the top level): the default of that key."""
    return (PACKAGED[table] if table else PACKAGED)[key]
