"""A batch read column-wise as the lake's flat Arrow table (``schemas.arrow.table_schema``), built from buffers.

The table equals the one ``schemas.arrow.to_table`` builds from the records ``Codec.decode`` returns for the
same rows, value for value and type for type, so the lake's files do not depend on which way a row came.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from schemas.arrow import table_schema
from schemas.columns.decoder import Columns, SubjectReader
from schemas.columns.plan import Items, Leaf, UnsupportedSchemaError
from schemas.columns.reader import items_mask
from schemas.registry import SchemaRegistry

NUMBERS = {"int": np.int32, "long": np.int64, "float": np.float32, "double": np.float64}


class TableBuilder:
    """The lake table of one subject's rows read by ``reader``."""

    def __init__(self, reader: SubjectReader, registry: SchemaRegistry) -> None:
        self.schema = table_schema(reader.subject, registry)
        parts = {part.name: part for part in reader.plan}
        self._parts: list[Leaf | Items] = []
        for field in self.schema:
            part = parts.get(field.name, parts.get(f"payload.{field.name}"))
            if part is None:
                raise UnsupportedSchemaError(f"{reader.subject}: no column for {field.name}")
            self._parts.append(part)

    def table(self, columns: Columns, rows: np.ndarray | None = None) -> pa.Table:
        """The table of ``rows`` (indices, in order; every row when None)."""
        arrays = [
            self._leaf(part, columns) if isinstance(part, Leaf) else self._list(part, field.type, columns)
            for part, field in zip(self._parts, self.schema, strict=True)
        ]
        table = pa.Table.from_arrays(arrays, schema=self.schema)
        return table if rows is None else table.take(rows)

    def _leaf(self, leaf: Leaf, columns: Columns) -> pa.Array:
        values, present = columns.top[leaf.name]
        if leaf.kind in NUMBERS:
            return _numbers(leaf, values, present)
        return _text(leaf, columns.text[leaf.name], present)

    def _list(self, part: Items, kind: pa.DataType, columns: Columns) -> pa.Array:
        count, fields = columns.items[part.name]
        width = next(iter(fields.values()))[1].shape[1]
        mask = items_mask(count, width)  # a bad row may count more items than were read: it is dropped
        children = []
        for leaf in part.fields:
            values, present = fields[leaf.name]
            if leaf.kind in NUMBERS:
                children.append(_numbers(leaf, values[mask], present[mask]))
            else:
                offsets, data = columns.text[f"{part.name}.{leaf.name}"]
                kept = np.append(offsets[:-1][mask.ravel()], offsets[-1])
                children.append(_text(leaf, (kept, data), present[mask]))
        offsets = np.zeros(len(count) + 1, dtype=np.int32)
        np.cumsum(mask.sum(1), out=offsets[1:])
        item = kind.value_type
        values = pa.StructArray.from_arrays(children, fields=list(item)) if part.record else children[0]
        return pa.ListArray.from_arrays(pa.array(offsets), values, type=kind)


def _numbers(leaf: Leaf, values: np.ndarray, present: np.ndarray) -> pa.Array:
    typed = values.astype(NUMBERS[leaf.kind], copy=False)
    return pa.array(typed, mask=~present if leaf.nullable else None)


def _text(leaf: Leaf, text: tuple[np.ndarray, np.ndarray], present: np.ndarray) -> pa.Array:
    offsets, data = text
    start = int(offsets[0])
    offsets = offsets - start  # the entries kept may start after others' bytes
    kind = pa.string() if leaf.kind == "string" else pa.binary()
    validity = None
    nulls = 0
    if leaf.nullable:
        nulls = int(len(present) - np.count_nonzero(present))
        validity = pa.py_buffer(np.packbits(present, bitorder="little")) if nulls else None
    if offsets[-1] >= 2**31:
        large = pa.large_string() if leaf.kind == "string" else pa.large_binary()
        buffers = [validity, pa.py_buffer(offsets), pa.py_buffer(data[start:])]
        return pa.Array.from_buffers(large, len(present), buffers, nulls).cast(kind)
    buffers = [validity, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data[start:])]
    return pa.Array.from_buffers(kind, len(present), buffers, nulls)
