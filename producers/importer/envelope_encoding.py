"""Avro bytes of the hardware events an import sends, their payloads framed once each.

An import's hardware events repeat a handful of payloads (a lost GPU, a PSU fault on an unnamed
part...), so each distinct payload is encoded by ``schemas.Codec`` once and its bytes reused; the
envelope (ids, host, cluster, times) is framed per record. Every field of the envelope comes
before the payload in every event schema, so the record's bytes are the envelope's then the
payload's; a test checks them against ``Codec.encode``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from producers.avro_columns import avro_string
from producers.importer.encoding import IncidentEncoder, _long
from schemas import Codec
from schemas.codec import HEADER


class EnvelopeEncoder:
    """``Codec.encode``'s bytes for records with the standard envelope, each distinct payload encoded once."""

    def __init__(self, codec: Codec | None = None, max_payloads: int = 100_000) -> None:
        self.codec = codec or Codec()
        self.max_payloads = max_payloads
        self._payloads: dict[tuple[Any, ...], bytes] = {}
        self._framed = IncidentEncoder(self.codec)  # its cache of framed texts (types, hosts, clusters)

    def _envelope(self, r: Mapping[str, Any]) -> bytes:
        t = self._framed._cached
        return b"".join(
            (
                avro_string(r["event_id"]),
                t(r["event_type"]),
                _long(r["schema_version"]),
                t(r["host_id"]),
                t(r["cluster"]),
                _long(r["ts"]),
                _long(r["agent_seq"]),
            )
        )

    def encode(self, record: Mapping[str, Any]) -> bytes:
        key = (record["event_type"], record["schema_version"], *record["payload"].items())
        try:
            body = self._payloads.get(key)
        except TypeError:  # a nested payload value: not one of the flat hardware events
            return self.codec.encode(dict(record))
        envelope = self._envelope(record)
        if body is None:
            whole = self.codec.encode(dict(record))
            body = whole[HEADER.size + len(envelope) :]  # framing, then the envelope, then the payload
            if len(self._payloads) < self.max_payloads:
                self._payloads[key] = body
            return whole
        return self.codec._headers[record["event_type"]] + envelope + body
