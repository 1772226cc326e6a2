"""Framed values of one subject's latest schema, decoded column-wise, each row taken only as ``Codec.decode`` takes it.

A row is ``ok`` when its bytes decode exactly as ``Codec.decode`` decodes them: the Confluent header of
that schema, every value inside the record (``schemas.columns.reader``), valid UTF-8 strings, the
subject's ``event_type`` and nothing after the record. Every other row is for the caller to decode one
by one, which decodes it or says why not; one bad row costs its batch nothing more.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from schemas.codec import HEADER, MAGIC_BYTE
from schemas.columns.plan import Leaf, Plan, UnsupportedSchemaError, compile_plan
from schemas.columns.reader import Arrays, Column, Reader, read_all
from schemas.registry import SchemaRegistry, SchemaVersion

Text = tuple[np.ndarray, np.ndarray]  # (offsets, bytes) of a string column's entries, one after another


@dataclass
class Columns:
    """One batch read column-wise: ``top`` leaves and ``items`` arrays by name (``payload.x``), with row masks."""

    ok: np.ndarray  # rows that decode exactly as Codec.decode decodes them
    ascii: np.ndarray  # rows whose strings are all ASCII
    wide: np.ndarray  # rows with an int value outside 32 bits (Codec.decode returns it as it is)
    raw: bytes  # the values one after another: text columns' starts point here
    top: dict[str, Column]
    items: Arrays
    text: dict[str, Text]  # every string and bytes column's entries, "array.field" inside arrays (n × items)

    def __len__(self) -> int:
        return len(self.ok)


class SubjectReader:
    """Reads framed values of ``version`` (a subject's latest schema) column-wise."""

    def __init__(self, version: SchemaVersion) -> None:
        self.subject, self.schema_id = version.subject, version.schema_id
        self.plan: Plan = compile_plan(version.parsed)
        if Leaf("event_type", "string") not in self.plan:
            raise UnsupportedSchemaError(f"{self.subject}: no event_type string")
        self._header = np.frombuffer(HEADER.pack(MAGIC_BYTE, self.schema_id), dtype=np.uint8)
        self._word = np.frombuffer(self.subject.encode(), dtype=np.uint8)

    def read(self, values: Sequence[bytes | memoryview | None]) -> Columns:
        """Every row of ``values`` (framed: header, then the Avro body) read at once."""
        n = len(values)
        reader = Reader([b"" if v is None else v for v in values])
        start, buf, width = reader.pos.copy(), reader.buf, len(self._header)
        reader.bad |= (reader.end - start < width) | ~(
            buf[start[:, None] + np.arange(width)] == self._header
        ).all(1)
        reader.advance(width, np.ones(n, dtype=bool))
        top, items = read_all(reader, self.plan)
        ok = ~reader.bad & (reader.pos == reader.end)
        (begin, length), _ = top["event_type"]
        at = np.minimum(begin[:, None] + np.arange(len(self._word)), len(buf) - 1)
        ok &= (length == len(self._word)) & (buf[at] == self._word).all(1)
        text: dict[str, Text] = {}
        ascii = np.ones(n, dtype=bool)
        for name, kind, ((begin, length), present) in self._texts(top, items):
            limit = np.broadcast_to(reader.end[:, None], begin.shape) if begin.ndim == 2 else reader.end
            offsets, data = text[name] = _gather(buf, begin, length, present, limit)
            if kind == "string":
                high = np.concatenate(([0], np.cumsum(data >= 0x80)))
                odd = (high[offsets[1:]] != high[offsets[:-1]]).reshape(begin.shape)
                odd = odd if odd.ndim == 1 else odd.any(1)
                ascii &= ~odd
                for row in np.flatnonzero(odd & ok).tolist():
                    ok[row] = _utf8(data, offsets, begin.shape, row)
        return Columns(ok, ascii, reader.wide, reader.raw, top, items, text)

    def _texts(self, top: dict[str, Column], items: Arrays) -> list[tuple[str, str, Column]]:
        out = []
        for part in self.plan:
            if isinstance(part, Leaf):
                if part.kind in ("string", "bytes"):
                    out.append((part.name, part.kind, top[part.name]))
                continue
            for leaf in part.fields:
                if leaf.kind in ("string", "bytes"):
                    out.append((f"{part.name}.{leaf.name}", leaf.kind, items[part.name][1][leaf.name]))
        return out


def _gather(
    buf: np.ndarray, begin: np.ndarray, length: np.ndarray, present: np.ndarray, limit: np.ndarray
) -> Text:
    """The entries' bytes one after another (an absent or bad entry is empty: kept inside its row)."""
    size = np.where(present, np.minimum(np.maximum(length, 0), limit - begin), 0).ravel()
    offsets = np.zeros(len(size) + 1, dtype=np.int64)
    np.cumsum(size, out=offsets[1:])
    index = np.repeat(begin.ravel() - offsets[:-1], size) + np.arange(offsets[-1])
    return offsets, buf[index]


def _utf8(data: np.ndarray, offsets: np.ndarray, shape: tuple[int, ...], row: int) -> bool:
    """Whether every string of ``row`` decodes as UTF-8 (as fastavro decodes it, strictly)."""
    width = shape[1] if len(shape) == 2 else 1
    try:
        for entry in range(row * width, (row + 1) * width):
            data[offsets[entry] : offsets[entry + 1]].tobytes().decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class ColumnDecoder:
    """A ``SubjectReader`` for the latest schema of every subject it can read (not maps, booleans, enums)."""

    def __init__(self, registry: SchemaRegistry) -> None:
        self._readers: dict[int, SubjectReader] = {}
        for subject in registry.subjects:
            try:
                reader = SubjectReader(registry.latest(subject))
            except UnsupportedSchemaError:
                continue
            self._readers[reader.schema_id] = reader

    @property
    def readers(self) -> dict[int, SubjectReader]:
        """By schema id: a schema id not here (not a latest schema, or not readable column-wise) is read one by one."""
        return dict(self._readers)
