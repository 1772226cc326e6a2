"""Schema evolution rules: every change must keep old and new readers working.

A new version may add fields only with defaults, may drop only fields that had defaults,
and may not change a field's type (records are compared recursively).
"""

from __future__ import annotations

import json
from typing import Any


def _canonical_type(t: Any) -> str:
    return json.dumps(_strip_docs(t), sort_keys=True)


def _strip_docs(t: Any) -> Any:
    if isinstance(t, dict):
        return {k: _strip_docs(v) for k, v in t.items() if k not in ("doc", "default")}
    if isinstance(t, list):
        return [_strip_docs(x) for x in t]
    return t


def check_compatible(old: dict[str, Any], new: dict[str, Any], path: str = "") -> list[str]:
    """Problems that make ``new`` incompatible with ``old`` (empty list: compatible)."""
    problems: list[str] = []
    prefix = f"{path}." if path else ""
    old_fields = {f["name"]: f for f in old.get("fields", [])}
    new_fields = {f["name"]: f for f in new.get("fields", [])}
    for name, field in new_fields.items():
        if name not in old_fields:
            if "default" not in field:
                problems.append(f"new field {prefix}{name} has no default")
            continue
        old_t, new_t = old_fields[name]["type"], field["type"]
        if isinstance(old_t, dict) and isinstance(new_t, dict) and old_t.get("type") == new_t.get("type") == "record":
            problems.extend(check_compatible(old_t, new_t, f"{prefix}{name}"))
        elif _canonical_type(old_t) != _canonical_type(new_t):
            problems.append(f"field {prefix}{name} changed type from {_canonical_type(old_t)} to {_canonical_type(new_t)}")
    for name, field in old_fields.items():
        if name not in new_fields and "default" not in field:
            problems.append(f"removed field {prefix}{name} had no default")
    return problems
