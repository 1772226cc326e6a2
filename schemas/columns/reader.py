"""Avro records of one schema read column-wise: every record of a batch at once, field by field.

A ``Reader`` holds the records' bytes in one buffer and a position per record; each read takes one
field of every record still ``active`` and moves those positions on, so the work is a few NumPy
operations per field, not per record. What it cannot read exactly as fastavro does (a varint past 64
bits, a union branch other than 0 or 1, a string or value past its record's end, an array in more
than one block) marks the record ``bad``; the caller decodes that record its usual way. An int past 32
bits, which fastavro reads as it is, marks the record ``wide`` (an Arrow int32 column cannot hold it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from schemas.columns.plan import FIXED, INT32, TEXT, VARINT, Items, Leaf, Plan

PAD = 16  # bytes after the last value, so that a varint or float read past a row stays in the buffer
MAX_ITEMS = 64  # more array items than this in one record: bad (read the usual way)

Column = tuple[Any, np.ndarray]  # (values, present): present is False where a union holds null
Arrays = dict[str, tuple[np.ndarray, dict[str, Column]]]  # array name: (items per record, fields n × items)


class Reader:
    """Positions of ``n`` records in one buffer; each read takes one field of every row still ``active``."""

    def __init__(self, values: Sequence[bytes | memoryview]) -> None:
        lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
        self.raw = b"".join(values)
        self.buf = np.frombuffer(self.raw + bytes(PAD), dtype=np.uint8)
        self.end = np.cumsum(lengths)
        self.pos = self.end - lengths
        self.bad = np.zeros(len(values), dtype=bool)
        self.wide = np.zeros(len(values), dtype=bool)
        self._windows: dict[str, np.ndarray] = {}

    def advance(self, by: np.ndarray | int, active: np.ndarray) -> None:
        """Move active rows on by ``by`` (not negative); a row that would pass its end is bad and stops there."""
        room = self.end - self.pos
        past = by > room
        if past.any():  # no sum past 64 bits either: a bad row reads its own bytes
            self.bad |= active & past
            by = np.minimum(by, room)
        self.pos += np.where(active, by, 0)

    def varint(self, active: np.ndarray) -> np.ndarray:
        """Avro int/long (zig-zag varint); longer than 10 bytes or past 64 bits: the row is bad."""
        pos = self.pos
        b = self.buf[pos]
        more = b >= 0x80
        if not more.any():  # every value in one byte: most counts, indexes and small numbers
            self.advance(1, active)
            z8 = b.astype(np.int64)
            return (z8 >> 1) ^ -(z8 & 1)
        z = (b & 0x7F).astype(np.uint64)
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
        """A float or double of every row, in its own width (a zero-copy view of the buffer at every byte)."""
        windows = self._windows.get(dtype)
        if windows is None:
            width = np.dtype(dtype).itemsize
            rows = np.lib.stride_tricks.as_strided(self.buf, (len(self.buf) - width + 1, width), (1, 1))
            windows = self._windows[dtype] = rows.view(dtype)[:, 0]
        values = windows[self.pos]
        self.advance(windows.itemsize, active)
        return values

    def string(self, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(start, length) of each row's string or bytes in ``raw``."""
        length = self.varint(active)
        self.bad |= active & (length < 0)
        start = self.pos.copy()
        self.advance(np.maximum(length, 0), active)
        return start, length

    def leaf(self, leaf: Leaf, active: np.ndarray) -> Column:
        """(values, present): present is False where the union holds null."""
        present = active
        if leaf.nullable:
            branch = self.varint(active)
            self.bad |= active & (branch != 0) & (branch != 1)
            present = active & (branch == 1)
        if leaf.kind in TEXT:
            return self.string(present), present
        if leaf.kind in VARINT:
            values = self.varint(present)
            if leaf.kind == "int":
                self.wide |= present & ((values < INT32[0]) | (values > INT32[1]))
            return values, present
        return self.fixed(FIXED[leaf.kind], present), present


def read_all(reader: Reader, plan: Plan) -> tuple[dict[str, Column], Arrays]:
    """Every field of every row: top-level leaves by name; arrays as (count, leaves shaped n × count)."""
    everyone = np.ones(len(reader.pos), dtype=bool)
    top: dict[str, Column] = {}
    items: Arrays = {}
    for part in plan:
        if isinstance(part, Leaf):
            top[part.name] = reader.leaf(part, everyone)
        else:
            items[part.name] = _array(reader, part, everyone)
    return top, items


def _array(reader: Reader, part: Items, everyone: np.ndarray) -> tuple[np.ndarray, dict[str, Column]]:
    count = reader.varint(everyone)
    reader.bad |= (count < 0) | (count > MAX_ITEMS)  # a block with its byte size, or absurd
    count = np.minimum(np.maximum(count, 0), MAX_ITEMS)
    per_item: list[dict[str, Column]] = []
    for k in range(int(count[~reader.bad].max(initial=0))):
        active = count > k
        per_item.append({leaf.name: reader.leaf(leaf, active) for leaf in part.fields})
    more = count > 0
    reader.bad |= more & (reader.varint(more) != 0)  # one block, then the end of the array
    return count, {
        leaf.name: _stack([d[leaf.name] for d in per_item], leaf, len(count)) for leaf in part.fields
    }


def _stack(columns: list[Column], leaf: Leaf, n: int) -> Column:
    """One array field's per-item reads as (values n × items, present n × items); text as (start, length)."""
    if not columns:
        empty = np.zeros((n, 0), dtype=np.int64)
        return ((empty, empty) if leaf.kind in TEXT else empty), np.zeros((n, 0), dtype=bool)
    present = np.stack([c[1] for c in columns], axis=1)
    if leaf.kind in TEXT:
        starts, lengths = (np.stack([c[0][j] for c in columns], axis=1) for j in (0, 1))
        return (starts, lengths), present
    return np.stack([c[0] for c in columns], axis=1), present


def items_mask(count: np.ndarray, width: int) -> np.ndarray:
    return np.arange(width) < count[:, None]
