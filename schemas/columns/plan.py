"""Which fields a column-wise read takes, in wire order: a schema compiled to flat leaves and arrays.

Records are flattened (a nested record's fields are named ``payload.x``); arrays hold flat records or
one primitive. A type this plan does not know (booleans, maps, enums, fixed, other unions, arrays of
arrays) raises ``UnsupportedSchemaError``: those bodies are decoded one by one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from schemas.errors import SchemaError

VARINT = {"int", "long"}
FIXED = {"float": "<f4", "double": "<f8"}
TEXT = {"string", "bytes"}
INT32 = (-(2**31), 2**31 - 1)  # an Avro int fastavro reads outside this range cannot go in an int32 column


class UnsupportedSchemaError(SchemaError):
    """The schema has a type the column reader does not know: its bodies are decoded one by one."""


@dataclass(frozen=True, slots=True)
class Leaf:
    name: str  # "" for the item of an array of a primitive
    kind: str  # "string", "bytes", "int", "long", "float" or "double"
    nullable: bool = False  # the union ["null", kind]


@dataclass(frozen=True, slots=True)
class Items:
    name: str
    fields: tuple[Leaf, ...]  # one Leaf named "" when the items are a primitive, not records
    record: bool


Plan = tuple[Leaf | Items, ...]


def _leaf(name: str, avro: Any) -> Leaf:
    nullable = isinstance(avro, list) and len(avro) == 2 and avro[0] == "null"
    kind = avro[1] if nullable else avro
    if not isinstance(kind, str) or kind not in VARINT | FIXED.keys() | TEXT:
        raise UnsupportedSchemaError(f"{name or 'array item'}: {avro!r}")
    return Leaf(name, kind, nullable)


def compile_plan(schema: dict[str, Any], prefix: str = "") -> Plan:
    """The fields in wire order: nested records flattened (``payload.`` names), arrays of flat records or primitives."""
    plan: list[Leaf | Items] = []
    for field in schema["fields"]:
        name, avro = prefix + field["name"], field["type"]
        if isinstance(avro, dict) and avro.get("type") == "record":
            plan += compile_plan(avro, name + ".")
        elif isinstance(avro, dict) and avro.get("type") == "array":
            items = avro["items"]
            if isinstance(items, dict) and items.get("type") == "record":
                plan.append(Items(name, tuple(_leaf(f["name"], f["type"]) for f in items["fields"]), True))
            else:
                plan.append(Items(name, (_leaf("", items),), False))
        else:
            plan.append(_leaf(name, avro))
    return tuple(plan)
