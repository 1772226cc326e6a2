"""Avro records of one schema read column-wise: every record of a batch at once, field by field.

A ``Reader`` holds the records' bytes in one buffer and a position per record; each read takes one
field of every record still ``active`` and moves those positions on, so the work is a few NumPy
operations per field, not per record. What it cannot read exactly (a varint past 64 bits, a string or
value past its record's end, an array in more than one block) marks the record ``bad``; the caller
then decodes that record its usual way. Types: records, int, long, float, double, string, the
unions ``["null", T]`` of those, and arrays of flat records without strings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from streams.core.errors import StreamsError

PAD = 16  # bytes after the last value, so that a varint or float read past a row stays in the buffer
MAX_ITEMS = 64  # more array items than this in one record: bad (read the usual way)
VARINT = {"int", "long"}
FIXED = {"float": "<f4", "double": "<f8"}

Column = tuple[Any, np.ndarray]  # (values, present): present is False where a union holds null
Arrays = dict[
    str, tuple[np.ndarray, dict[str, Column]]
]  # array name: (items per record, item fields n × items)


class UnsupportedSchemaError(StreamsError):
    """The schema has a type this reader does not know: every row goes the per-record way."""


@dataclass(frozen=True, slots=True)
class Leaf:
    name: str
    kind: str  # "string", "int", "long", "float" or "double"
    nullable: bool = False  # the union ["null", kind]


@dataclass(frozen=True, slots=True)
class Items:
    name: str
    fields: tuple[Leaf, ...]


Plan = tuple[Leaf | Items, ...]


def _leaf(name: str, avro: Any) -> Leaf:
    nullable = isinstance(avro, list) and len(avro) == 2 and avro[0] == "null"
    kind = avro[1] if nullable else avro
    if kind not in VARINT and kind not in FIXED and kind != "string":
        raise UnsupportedSchemaError(f"{name}: {avro!r}")
    return Leaf(name, kind, nullable)


def compile_plan(schema: dict[str, Any], prefix: str = "") -> Plan:
    """The fields in wire order, the payload record flattened (``payload.`` names), arrays of flat records."""
    plan: list[Leaf | Items] = []
    for field in schema["fields"]:
        name, avro = prefix + field["name"], field["type"]
        if isinstance(avro, dict) and avro.get("type") == "record":
            plan += compile_plan(avro, name + ".")
        elif isinstance(avro, dict) and avro.get("type") == "array" and avro["items"].get("type") == "record":
            leaves = tuple(_leaf(f["name"], f["type"]) for f in avro["items"]["fields"])
            if any(leaf.kind == "string" for leaf in leaves):
                raise UnsupportedSchemaError(f"{name}: strings in array items")
            plan.append(Items(name, leaves))
        else:
            plan.append(_leaf(name, avro))
    return tuple(plan)


class Reader:
    """Positions of ``n`` records in one buffer; each read takes one field of every row still ``active``."""

    def __init__(self, values: Sequence[bytes]) -> None:
        lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
        self.raw = b"".join(values)
        self.buf = np.frombuffer(self.raw + bytes(PAD), dtype=np.uint8)
        self.end = np.cumsum(lengths)
        self.pos = self.end - lengths
        self.bad = np.zeros(len(values), dtype=bool)

    def advance(self, by: np.ndarray | int, active: np.ndarray) -> None:
        self.pos += np.where(active, by, 0)
        self.bad |= self.pos > self.end
        np.minimum(self.pos, self.end, out=self.pos)  # a bad row reads its own bytes, not past the buffer

    def varint(self, active: np.ndarray) -> np.ndarray:
        """Avro int/long (zig-zag varint); longer than 10 bytes or past 64 bits: the row is bad."""
        pos = self.pos
        b = self.buf[pos]
        z = (b & 0x7F).astype(np.uint64)
        more = b >= 0x80
        used = np.ones(len(pos), dtype=np.int64)
        shift = 7
        while more.any():
            if shift > 63:
                self.bad |= more & active
                break
            b = self.buf[pos + used]
            bits = (b & 0x7F).astype(np.uint64)
            if shift == 63:
                self.bad |= more & active & (bits > 1)
            z |= np.where(more, bits << np.uint64(shift), np.uint64(0))
            used += more
            more &= b >= 0x80
            shift += 7
        self.advance(used, active)
        return ((z >> np.uint64(1)) ^ (np.uint64(0) - (z & np.uint64(1)))).view(np.int64)

    def fixed(self, dtype: str, active: np.ndarray) -> np.ndarray:
        width = np.dtype(dtype).itemsize
        values = self.buf[self.pos[:, None] + np.arange(width)].view(dtype)[:, 0].astype(np.float64)
        self.advance(width, active)
        return values

    def string(self, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(start, length) of each row's string in ``raw``."""
        length = self.varint(active)
        self.bad |= active & (length < 0)
        start = self.pos.copy()
        self.advance(np.maximum(length, 0), active)
        return start, length

    def leaf(self, leaf: Leaf, active: np.ndarray) -> tuple[Any, np.ndarray]:
        """(values, present): present is False where the union holds null."""
        present = active
        if leaf.nullable:
            branch = self.varint(active)
            self.bad |= active & (branch != 0) & (branch != 1)
            present = active & (branch == 1)
        if leaf.kind == "string":
            return self.string(present), present
        if leaf.kind in VARINT:
            return self.varint(present), present
        return self.fixed(FIXED[leaf.kind], present), present


def read_all(
    reader: Reader, plan: Plan
) -> tuple[
    dict[str, tuple[Any, np.ndarray]], dict[str, tuple[np.ndarray, dict[str, tuple[Any, np.ndarray]]]]
]:
    """Every field of every row: top-level leaves by name; arrays as (count, leaves shaped n × count)."""
    everyone = np.ones(len(reader.pos), dtype=bool)
    top: dict[str, tuple[Any, np.ndarray]] = {}
    items: dict[str, tuple[np.ndarray, dict[str, tuple[Any, np.ndarray]]]] = {}
    for part in plan:
        if isinstance(part, Leaf):
            top[part.name] = reader.leaf(part, everyone)
            continue
        count = reader.varint(everyone)
        reader.bad |= (count < 0) | (count > MAX_ITEMS)  # a block with its byte size, or absurd
        count = np.clip(count, 0, MAX_ITEMS)
        per_item: list[dict[str, tuple[Any, np.ndarray]]] = []
        for k in range(int(count[~reader.bad].max(initial=0))):
            active = count > k
            per_item.append({leaf.name: reader.leaf(leaf, active) for leaf in part.fields})
        more = count > 0
        reader.bad |= more & (reader.varint(more) != 0)  # one block, then the end of the array
        items[part.name] = (
            count,
            {leaf.name: _stack([d[leaf.name] for d in per_item], leaf, len(count)) for leaf in part.fields},
        )
    return top, items


def _stack(columns: list[tuple[Any, np.ndarray]], leaf: Leaf, n: int) -> tuple[np.ndarray, np.ndarray]:
    """One array field's per-item reads as (values n × items, present n × items)."""
    if not columns:
        return np.zeros((n, 0)), np.zeros((n, 0), dtype=bool)
    return np.stack([c[0] for c in columns], axis=1), np.stack([c[1] for c in columns], axis=1)


def items_mask(count: np.ndarray, width: int) -> np.ndarray:
    return np.arange(width) < count[:, None]
