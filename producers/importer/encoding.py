"""Avro bytes of ``IncidentReported`` records without fastavro's per-record dispatch (the import's hot path).

The schema is flat (strings, longs, nullable unions), so each record is a join of pre-framed
pieces; a test checks the bytes against ``schemas.Codec`` on varied records, and any other
event type goes through the codec.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from producers.avro_columns import avro_string
from schemas import Codec, EncodeError, IncidentReported
from schemas.bounds import LONG_MAX, LONG_MIN


def _long(value: int) -> bytes:
    # a value beyond a long would be written as an over-long varint that reads back as another number
    if not LONG_MIN <= value <= LONG_MAX:
        raise EncodeError(IncidentReported.EVENT_TYPE, f"{value!r} is outside an Avro long")
    z = (value << 1) ^ (value >> 63)
    out = bytearray()
    while z > 0x7F:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def _optional_string(value: str | None) -> bytes:
    return b"\x00" if value is None else b"\x02" + avro_string(value)


def _optional_long(value: int | None) -> bytes:
    return b"\x00" if value is None else b"\x02" + _long(value)


class IncidentEncoder:
    """Framed IncidentReported bytes, identical to ``Codec.encode``; other records are handed to the codec."""

    def __init__(self, codec: Codec | None = None) -> None:
        self.codec = codec or Codec()
        et = IncidentReported.EVENT_TYPE
        self._prefix = (
            self.codec._headers[et] + avro_string(et) + _long(IncidentReported.SCHEMA_VERSION)
        )  # framing, event_type and schema_version are the same for every record
        self._strings: dict[str, bytes] = {}

    def _cached(self, text: str) -> bytes:
        """Causes, classes and hosts repeat across a trace: frame each text once."""
        found = self._strings.get(text)
        if found is None:
            found = self._strings[text] = avro_string(text)
        return found

    def encode(self, record: Mapping[str, Any]) -> bytes:
        if (
            record["event_type"] != IncidentReported.EVENT_TYPE
            or record["schema_version"] != IncidentReported.SCHEMA_VERSION
        ):
            return self.codec.encode(dict(record))
        p, s = record["payload"], self._cached
        ts = _long(record["ts"])
        start = ts if p["start_ts"] == record["ts"] else _long(p["start_ts"])  # an incident's ts is its start
        return b"".join(
            (
                self._prefix[:5],
                avro_string(record["event_id"]),
                self._prefix[5:],
                s(record["host_id"]),
                s(record["cluster"]),
                ts,
                _long(record["agent_seq"]),
                s(p["cause"]),
                s(p["source_class"]),
                avro_string(p["source_text"]),
                _optional_string(p["component"]),
                _optional_string(p["component_kind"]),
                start,
                _optional_long(p["end_ts"]),
            )
        )
