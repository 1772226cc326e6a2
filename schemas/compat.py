"""Schema evolution rules, judged by Apache Avro's own reader/writer compatibility checker.

The registry's rule is BACKWARD, Confluent's default: a new version's readers read every record
written with the version before it, so consumers are upgraded first. FULL adds the other
direction (old readers read new data). The ``avro`` package applies the specification's
resolution rules everywhere: inside arrays, maps and unions, promotions, aliases and defaults.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import avro.schema
from avro.compatibility import ReaderWriterCompatibilityChecker, SchemaCompatibilityType


def _problems(reader: avro.schema.Schema, writer: avro.schema.Schema, direction: str) -> list[str]:
    result = ReaderWriterCompatibilityChecker().get_compatibility(reader, writer)
    if result.compatibility is SchemaCompatibilityType.compatible:
        return []
    where = sorted(set(result.locations)) or ["/"]
    return [f"{direction}: {message} (at {', '.join(where)})" for message in sorted(set(result.messages))]


Mode = Literal["backward", "full"]


def check_compatible(old: dict[str, Any], new: dict[str, Any], mode: Mode = "backward") -> list[str]:
    """Problems that make ``new`` incompatible with ``old`` under ``mode`` (empty list: compatible)."""
    old_schema = avro.schema.parse(json.dumps(old))
    new_schema = avro.schema.parse(json.dumps(new))
    problems = _problems(new_schema, old_schema, "new readers cannot read old data")
    if mode == "full":
        problems += _problems(old_schema, new_schema, "old readers cannot read new data")
    return problems
