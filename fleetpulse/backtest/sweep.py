"""Policy variants for a sweep: ``--set key=v1,v2`` on the policy's TOML mapping, several keys as a grid.

A key is a dotted path into the policy file (``slow_host.min_slowdown``, ``planner.capacity_buffer_pct``);
a list of named tables is entered by name (``rules.dram_uce_repeat_gpu.count``) or by index. Each
value is read as a TOML value (``0.02``, ``true``, ``[1, 2]``), else kept as text (``5m``), and every
variant is validated by ``streams.core.policy.parse_policy`` like a policy file.
"""

from __future__ import annotations

import copy
import itertools
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fleetpulse.backtest.errors import BacktestError
from streams.core.errors import PolicyError
from streams.core.policy import DEFAULT_POLICY_FILE, Policy, parse_policy


@dataclass(frozen=True, slots=True)
class Setting:
    """One ``--set``: a dotted key and the values to try, in the order given."""

    key: str
    values: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Variant:
    """One point of the grid: the values it sets (key -> value) and the policy they make."""

    values: tuple[tuple[str, Any], ...]
    policy: Policy

    @property
    def label(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.values) or "policy as given"


def _value(text: str) -> Any:
    text = text.strip()
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _split(values: str) -> list[str]:
    """Comma-separated values; commas inside brackets belong to one TOML array value."""
    parts, depth, current = [], 0, ""
    for ch in values:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    return [*parts, current]


def parse_setting(text: str) -> Setting:
    """``key=v1,v2,…`` as a ``Setting`` (BacktestError naming the bad option)."""
    key, sep, values = text.partition("=")
    parsed = tuple(_value(v) for v in _split(values) if v.strip())
    if not sep or not key.strip() or not parsed:
        raise BacktestError(f"bad --set {text!r}: want KEY=V1[,V2…], e.g. slow_host.min_slowdown=0.01,0.02")
    return Setting(key.strip(), parsed)


def _child(node: Any, part: str, key: str) -> Any:
    if isinstance(node, dict):
        return node.setdefault(part, {})
    if isinstance(node, list):
        if part.isdigit() and int(part) < len(node):
            return node[int(part)]
        named = [item for item in node if isinstance(item, dict) and item.get("name") == part]
        if named:
            return named[0]
    raise BacktestError(f"--set {key}: no entry {part!r} in the policy")


def set_key(data: dict[str, Any], key: str, value: Any) -> None:
    """Set a dotted key in a policy mapping in place (tables are created as needed)."""
    *path, last = key.split(".")
    node: Any = data
    for part in path:
        node = _child(node, part, key)
    if isinstance(node, list):
        if not last.isdigit() or int(last) >= len(node):
            raise BacktestError(f"--set {key}: no entry {last!r} in the policy")
        node[int(last)] = value
    elif isinstance(node, dict):
        node[last] = value
    else:
        raise BacktestError(f"--set {key}: {'.'.join(path)} is a value, not a table")


def read_policy_data(path: Path | None) -> dict[str, Any]:
    """The policy file's mapping (the packaged policy when ``path`` is None)."""
    file = path if path is not None else DEFAULT_POLICY_FILE
    try:
        return tomllib.loads(file.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise BacktestError(f"cannot read policy {file}: {exc}") from exc


def variants(data: dict[str, Any], settings: Sequence[Setting]) -> list[Variant]:
    """Every combination of the settings' values (first setting outermost), each a validated policy."""
    keys = [s.key for s in settings]
    if len(set(keys)) != len(keys):
        raise BacktestError(f"--set names a key twice: {', '.join(keys)}")
    out = []
    for combo in itertools.product(*(s.values for s in settings)):
        changed = copy.deepcopy(data)
        for key, value in zip(keys, combo, strict=True):
            set_key(changed, key, value)
        values = tuple(zip(keys, combo, strict=True))
        try:
            policy = parse_policy(changed)
        except PolicyError as exc:
            raise BacktestError(f"--set {', '.join(f'{k}={v}' for k, v in values)}: {exc}") from exc
        out.append(Variant(values, policy))
    return out
