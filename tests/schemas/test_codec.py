"""Round trips, framing rules and hostile input for the framed-Avro codec."""

from __future__ import annotations

import contextlib
import io
import json
import struct

import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas import (
    Codec,
    EncodeError,
    FramingError,
    PayloadError,
    SchemaRegistry,
    UnknownSchemaError,
    XidRaised,
)
from schemas.codec import HEADER
from schemas.errors import DecodeError
from tests.schemas.strategies import record_for
from tests.streams import factories

REGISTRY = SchemaRegistry.load()
CODEC = Codec(REGISTRY)


def xid_record(**overrides: object) -> dict:
    rec = XidRaised(
        event_id="e-1",
        host_id="h-1",
        cluster="c-1",
        ts=1_700_000_000_000,
        agent_seq=4,
        payload={"gpu": 3, "xid": 79, "pci_bus_id": "0000:1b:00.0", "message": "fell off the bus"},
    ).to_record()
    rec.update(overrides)
    return rec


@pytest.mark.parametrize("subject", REGISTRY.subjects)
def test_every_schema_round_trips(subject: str) -> None:
    raw = REGISTRY.latest(subject).raw

    @settings(max_examples=40, deadline=None)
    @given(record_for(raw))
    def round_trip(record: dict) -> None:
        decoded = CODEC.decode(CODEC.encode(record))
        assert decoded.event_type == subject
        assert decoded.record == record

    round_trip()


def test_frame_is_magic_byte_then_big_endian_schema_id() -> None:
    data = CODEC.encode(xid_record())
    magic, schema_id = struct.unpack(">bI", data[:5])
    assert magic == 0
    assert schema_id == REGISTRY.latest("XidRaised").schema_id


def test_plain_fastavro_reader_decodes_with_only_the_avsc_and_the_framing_rule() -> None:
    avsc = json.loads(REGISTRY.latest("XidRaised").path.read_text())
    data = CODEC.encode(xid_record())
    body = io.BytesIO(data[5:])
    assert fastavro.schemaless_reader(body, fastavro.parse_schema(avsc)) == xid_record()


@pytest.mark.parametrize(
    ("data", "error", "words"),
    [
        (b"", FramingError, "shorter than"),
        (b"\x00\x00\x00", FramingError, "shorter than"),
        (b"\x01\x00\x00\x00\x03abc", FramingError, "magic byte"),
        (b"\x00\x00\x00\x99\x99abc", UnknownSchemaError, "not in the registry"),
        (b"\x00\x00\x00\x00\x03\xff", PayloadError, "does not decode"),
    ],
)
def test_bad_bytes_raise_a_typed_error_that_says_why(data: bytes, error: type, words: str) -> None:
    with pytest.raises(error) as info:
        CODEC.decode(data)
    assert words in info.value.reason


def test_trailing_bytes_are_rejected() -> None:
    with pytest.raises(PayloadError, match="trailing"):
        CODEC.decode(CODEC.encode(xid_record()) + b"\x00")


def test_record_of_one_type_framed_with_another_id_is_rejected() -> None:
    data = bytearray(CODEC.encode(xid_record()))
    data[1:5] = struct.pack(">I", REGISTRY.latest("HostInventoried").schema_id)
    with pytest.raises(DecodeError):
        CODEC.decode(bytes(data))


def test_encode_rejects_records_that_do_not_fit() -> None:
    with pytest.raises(EncodeError, match="XidRaised"):
        CODEC.encode(xid_record(ts="yesterday"))
    with pytest.raises(EncodeError, match="unknown event type"):
        CODEC.encode(xid_record(event_type="NoSuchEvent"))


@settings(max_examples=2000, deadline=None)
@given(st.binary(max_size=200))
def test_fuzzed_bytes_never_crash_the_decoder(data: bytes) -> None:
    with contextlib.suppress(DecodeError):
        CODEC.decode(data)


@settings(max_examples=1000, deadline=None)
@given(st.sampled_from(REGISTRY.subjects), st.binary(max_size=120))
def test_fuzzed_bodies_behind_a_valid_header_never_crash(subject: str, body: bytes) -> None:
    header = struct.pack(">bI", 0, REGISTRY.latest(subject).schema_id)
    with contextlib.suppress(DecodeError):
        CODEC.decode(header + body)


def test_the_reason_for_a_truncated_body_is_the_same_every_time() -> None:
    """fastavro names its buffer object (with its address) when a float runs out; the reason must not."""
    data = CODEC.encode(factories.sample())
    for cut in range(HEADER.size + 1, len(data)):
        reasons = set()
        for _ in range(2):
            with pytest.raises(PayloadError) as info:
                CODEC.decode(data[:cut])
            reasons.add(info.value.reason)
        assert len(reasons) == 1 and " at 0x" not in reasons.pop()
