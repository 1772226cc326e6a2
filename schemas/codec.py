"""Encode and decode events in the Confluent wire format.

Frame: magic byte 0, the 4-byte big-endian schema id, then the Avro binary body. Any
Kafka tool that speaks the Confluent framing can read fleetpulse records given the
``.avsc`` files; nothing here needs a registry server.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from io import BytesIO
from typing import Any

from fastavro import schemaless_reader, schemaless_writer

from schemas.errors import EncodeError, FramingError, PayloadError, UnknownSchemaError
from schemas.registry import SchemaRegistry, SchemaVersion

MAGIC_BYTE = 0
_OBJECT_AT = re.compile(
    r" from <[^<>]* at 0x[0-9a-f]+>"
)  # an address would make the same fault read differently
HEADER = struct.Struct(">bI")


@dataclass(frozen=True, slots=True)
class DecodedEvent:
    event_type: str
    schema_id: int
    schema_version: int
    record: dict[str, Any]


class Codec:
    """Framed-Avro encoder/decoder over a ``SchemaRegistry`` (the committed one by default)."""

    def __init__(self, registry: SchemaRegistry | None = None) -> None:
        self.registry = registry or SchemaRegistry.load()
        self._writers: dict[str, SchemaVersion] = {s: self.registry.latest(s) for s in self.registry.subjects}
        self._headers = {s: HEADER.pack(MAGIC_BYTE, v.schema_id) for s, v in self._writers.items()}

    def schema_id(self, event_type: str) -> int:
        return self._writer(event_type).schema_id

    def _writer(self, event_type: str) -> SchemaVersion:
        try:
            return self._writers[event_type]
        except KeyError:
            raise EncodeError(event_type, f"unknown event type; known: {', '.join(self._writers)}") from None

    def encode(self, record: dict[str, Any]) -> bytes:
        """Encode a record (envelope + payload dict) with the latest schema of its ``event_type``."""
        event_type = record.get("event_type")
        if not isinstance(event_type, str):
            raise EncodeError(str(event_type), "record has no string event_type")
        writer = self._writer(event_type)
        buf = BytesIO()
        buf.write(self._headers[event_type])
        try:
            schemaless_writer(buf, writer.parsed, record)
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError, struct.error) as exc:
            raise EncodeError(event_type, f"{type(exc).__name__}: {exc}") from exc
        return buf.getvalue()

    def decode(self, data: bytes | bytearray | memoryview | None) -> DecodedEvent:
        """Decode framed bytes; raise a ``DecodeError`` subclass that says why it failed."""
        if data is None:
            raise FramingError("empty record value (tombstone or null)")
        raw = bytes(data)
        if len(raw) < HEADER.size:
            raise FramingError(f"record of {len(raw)} bytes is shorter than the 5-byte Confluent header")
        magic, schema_id = HEADER.unpack_from(raw)
        if magic != MAGIC_BYTE:
            raise FramingError(f"magic byte is {magic}, expected {MAGIC_BYTE} (not Confluent-framed Avro)")
        writer = self.registry.by_id(schema_id)
        if writer is None:
            raise UnknownSchemaError(f"schema id {schema_id} is not in the registry", schema_id)
        reader = self._writers[writer.subject]
        body = BytesIO(raw)
        body.seek(HEADER.size)
        try:
            if reader.schema_id == writer.schema_id:
                record = schemaless_reader(body, writer.parsed, None)
            else:
                record = schemaless_reader(body, writer.parsed, reader.parsed)
        except Exception as exc:  # fastavro raises many types on corrupt input; all mean the same here
            detail = _OBJECT_AT.sub("", str(exc))  # "cannot read float from <_io.BytesIO object at 0x…>"
            raise PayloadError(
                f"Avro body does not decode as {writer.subject} v{writer.version}: {type(exc).__name__}: {detail}",
                schema_id,
            ) from exc
        if body.tell() != len(raw):
            raise PayloadError(
                f"{len(raw) - body.tell()} trailing bytes after a {writer.subject} v{writer.version} record",
                schema_id,
            )
        if not isinstance(record, dict) or record.get("event_type") != writer.subject:
            raise PayloadError(
                f"event_type field {record.get('event_type') if isinstance(record, dict) else None!r} "
                f"does not match schema {writer.subject}",
                schema_id,
            )
        return DecodedEvent(writer.subject, schema_id, writer.version, record)


def body_event_id(body: bytes | memoryview) -> str | None:
    """The ``event_id`` an Avro body opens with, without decoding the rest; None when the bytes cannot hold one.

    Every schema's first field is the envelope's ``event_id`` string (the registry's tests pin the
    order): a zig-zag varint length, then its UTF-8 bytes.
    """
    z = shift = pos = 0
    while True:
        if pos >= len(body) or pos > 9:
            return None
        byte = body[pos]
        z |= (byte & 0x7F) << shift
        pos += 1
        if not byte & 0x80:
            break
        shift += 7
    length = (z >> 1) ^ -(z & 1)
    if length < 0 or pos + length > len(body):
        return None
    try:
        return bytes(body[pos : pos + length]).decode()
    except UnicodeDecodeError:
        return None
