"""Arrow tables for events: envelope columns plus the payload's fields as top-level columns.

The lake (analytics) and the simulator's Parquet sink both write this layout, so a batch
job reads the same columns whichever way the events arrived.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa

from schemas.events import ENVELOPE_FIELDS, EVENT_CLASSES
from schemas.registry import SchemaRegistry

_PRIMITIVES: dict[str, pa.DataType] = {
    "string": pa.string(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "boolean": pa.bool_(),
    "bytes": pa.binary(),
}


def _field(name: str, avro_type: Any) -> pa.Field:
    nullable = isinstance(avro_type, list) and "null" in avro_type
    if isinstance(avro_type, list):
        non_null = [t for t in avro_type if t != "null"]
        avro_type = non_null[0]
    return pa.field(name, _arrow_type(avro_type), nullable=nullable)


def _arrow_type(t: Any) -> pa.DataType:
    if isinstance(t, str):
        return _PRIMITIVES[t]
    kind = t["type"]
    if kind == "record":
        return pa.struct([_field(f["name"], f["type"]) for f in t["fields"]])
    if kind == "array":
        return pa.list_(_arrow_type(t["items"]))
    if kind == "map":
        return pa.map_(pa.string(), _arrow_type(t["values"]))
    if kind in _PRIMITIVES:
        return _PRIMITIVES[kind]
    raise ValueError(f"no Arrow mapping for Avro type {t!r}")


def table_schema(event_type: str, registry: SchemaRegistry | None = None) -> pa.Schema:
    """Flat Arrow schema of one event type (envelope + payload fields)."""
    raw = (registry or SchemaRegistry.load()).latest(event_type).raw
    fields = [_field(f["name"], f["type"]) for f in raw["fields"] if f["name"] != "payload"]
    payload = next(f for f in raw["fields"] if f["name"] == "payload")["type"]
    fields += [_field(f["name"], f["type"]) for f in payload["fields"]]
    names = [f.name for f in fields]
    assert len(names) == len(set(names)), f"{event_type}: payload field shadows an envelope field"
    return pa.schema(fields)


def flatten(record: Mapping[str, Any]) -> dict[str, Any]:
    """One event record as one flat row."""
    row = {k: record[k] for k in ENVELOPE_FIELDS}
    row.update(record["payload"])
    return row


def to_table(
    event_type: str, records: Iterable[Mapping[str, Any]], schema: pa.Schema | None = None
) -> pa.Table:
    """Flat Arrow table of records of one event type."""
    schema = schema or table_schema(event_type)
    rows = [flatten(r) for r in records]
    return pa.Table.from_pylist(rows, schema=schema)


def table_name(event_type: str) -> str:
    """Lake table of an event type: ``HostSampled`` → ``host_sampled`` (or the class's ``LAKE_TABLE``)."""
    cls = EVENT_CLASSES.get(event_type)
    if cls is not None and cls.LAKE_TABLE:
        return cls.LAKE_TABLE
    out = []
    for i, ch in enumerate(event_type):
        if ch.isupper() and i:
            out.append("_")
        out.append(ch.lower())
    return "".join(out)
