"""Decode many Avro bodies of one writer schema at once, straight into the lake's Arrow layout.

Per record, fastavro builds a dict for each event and Arrow then rebuilds columns from those dicts:
~45 µs a HostSampled sample, which held one archiver near 10,000 records/s of a core. The bodies of
one writer schema, concatenated, are exactly the data of one block of an Avro object container file,
which Polars' Rust reader decodes column-wise about twenty times faster.

A concatenation has no record boundaries, so a body one byte too long or too short would shift every
row after it. Each decoded row's event id is therefore checked against the id its own body starts
with, and the first body is repeated at the end of the block as a sentinel. Any failure (a check, an
error, a Rust panic) returns None and the caller decodes those records one by one, which names the
bad one; the result is the same table the per-record path builds.

One difference remains, on damaged bodies only: Polars reads a union branch index other than 0 as the
value branch, where fastavro fails. A body with such an index that still ends where it should is
archived rather than rejected. Kafka's checksums keep bytes as they were written and Avro writers
write valid indexes, so only a producer that writes corrupt bodies gets there; the quality gates
still judge the values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from io import BytesIO
from typing import Any

import fastavro
import polars as pl
import pyarrow as pa
from fastavro.io.binary_encoder import BinaryEncoder
from polars.exceptions import PanicException

from schemas.arrow import table_schema
from schemas.codec import body_event_id
from schemas.registry import SchemaRegistry, SchemaVersion

SYNC = b"fleetpulse-block"  # any 16 bytes: the container is built and read in memory, never stored
_SUPPORTED = {"record", "array", "string", "int", "long", "float", "double", "bytes", "null"}


@dataclass(frozen=True)
class _Writer:
    subject: str
    header: bytes  # container header naming the writer schema (without field defaults)
    schema: pa.Schema  # the lake table's flat layout


def decodable(node: Any) -> bool:
    """Whether Polars' Avro reader decodes this schema node as fastavro does.

    Not maps (it panics), not booleans (a byte other than 0 or 1 reads differently), and not enums or
    fixed, which no fleetpulse schema uses.
    """
    if isinstance(node, str):
        return node in _SUPPORTED
    if isinstance(node, list):
        return len(node) == 2 and "null" in node and all(decodable(t) for t in node)
    kind = node["type"]
    if kind == "record":
        return all(decodable(f["type"]) for f in node["fields"])
    if kind == "array":
        return decodable(node["items"])
    return decodable(kind)


def _without_defaults(node: Any) -> Any:
    """The schema without ``default`` and ``doc``: Polars refuses a string field's default (OutOfSpec).

    Defaults only matter when resolving one schema against another; these bodies are read with the
    schema that wrote them.
    """
    if isinstance(node, list):
        return [_without_defaults(n) for n in node]
    if isinstance(node, dict):
        return {k: _without_defaults(v) for k, v in node.items() if k not in ("default", "doc")}
    return node


def _header(version: SchemaVersion) -> bytes:
    buf = BytesIO()
    fastavro.writer(buf, _without_defaults(version.raw), [], codec="null", sync_marker=SYNC)
    return buf.getvalue()


class BlockDecoder:
    """Column-wise decoding of the latest schema of every subject Polars can read."""

    def __init__(self, registry: SchemaRegistry) -> None:
        self._writers: dict[int, _Writer] = {}
        for subject in registry.subjects:
            latest = registry.latest(subject)
            if latest.raw["fields"][0]["name"] == "event_id" and decodable(latest.raw):
                self._writers[latest.schema_id] = _Writer(
                    subject, _header(latest), table_schema(subject, registry)
                )

    def subject(self, schema_id: int) -> str | None:
        """The subject whose bodies this decodes column-wise, or None (not latest, or not decodable)."""
        writer = self._writers.get(schema_id)
        return None if writer is None else writer.subject

    def decode(self, schema_id: int, bodies: Sequence[bytes | memoryview]) -> pa.Table | None:
        """The flat lake table of ``bodies`` (one row each, in order), or None when they do not all decode."""
        writer = self._writers[schema_id]
        ids = [body_event_id(b) for b in bodies]
        if not bodies or None in ids:
            return None
        block = [*bodies, bodies[0]]
        data = b"".join(block)
        counts = BytesIO()
        encoder = BinaryEncoder(counts)
        encoder.write_long(len(block))
        encoder.write_long(len(data))
        container = b"".join((writer.header, counts.getvalue(), data, SYNC))
        try:
            frame = pl.read_avro(BytesIO(container))
            decoded = frame["event_id"].to_list()
            if decoded != [*ids, ids[0]] or (frame["event_type"] != writer.subject).any():
                return None
            flat = frame.head(len(bodies)).unnest("payload").to_arrow()
            return flat.select(writer.schema.names).cast(writer.schema)
        except (Exception, PanicException):  # corrupt bodies fail in many ways; all mean "decode one by one"
            return None
