"""Hypothesis strategies that build valid records for any Avro schema in the registry."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

INT32 = st.integers(min_value=-(2**31), max_value=2**31 - 1)
INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
FLOAT32 = st.floats(width=32, allow_nan=False)


def for_type(t: Any) -> st.SearchStrategy[Any]:
    if isinstance(t, list):
        return st.one_of(*[for_type(x) for x in t])
    if isinstance(t, str):
        return {
            "null": st.none(),
            "string": st.text(max_size=20),
            "int": INT32,
            "long": INT64,
            "float": FLOAT32,
            "double": st.floats(allow_nan=False),
            "boolean": st.booleans(),
            "bytes": st.binary(max_size=32),
        }[t]
    kind = t["type"]
    if kind == "record":
        return st.fixed_dictionaries({f["name"]: for_type(f["type"]) for f in t["fields"]})
    if kind == "array":
        return st.lists(for_type(t["items"]), max_size=4)
    if kind == "map":
        return st.dictionaries(st.text(max_size=8), for_type(t["values"]), max_size=3)
    return for_type(kind)


def record_for(raw_schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Records of a top-level event schema, with event_type pinned to the schema's name."""
    fields = {f["name"]: for_type(f["type"]) for f in raw_schema["fields"]}
    fields["event_type"] = st.just(raw_schema["name"])
    return st.fixed_dictionaries(fields)
