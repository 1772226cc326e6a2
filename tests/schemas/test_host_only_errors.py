"""XidRaised, EccErrorObserved and LinkEventObserved v2: the GPU or port may be null (host-only records)."""

from __future__ import annotations

import io

import pytest
from fastavro import schemaless_writer

from schemas import Codec, SchemaRegistry
from schemas.arrow import table_schema
from schemas.codec import HEADER, MAGIC_BYTE
from schemas.compat import check_compatible
from tests.streams import factories

REGISTRY = SchemaRegistry.load()
PART = {"XidRaised": "gpu", "EccErrorObserved": "gpu", "LinkEventObserved": "port"}


def _record(subject: str, part: int | None) -> dict:
    if subject == "XidRaised":
        record = factories.xid(79, gpu=part)  # type: ignore[arg-type]
        record["payload"]["message"] = ""
        return record
    if subject == "EccErrorObserved":
        return factories.ecc(gpu=part)  # type: ignore[arg-type]
    return factories.link("nic_lost", port=part)  # type: ignore[arg-type]


def _payload_field(raw: dict, name: str) -> dict:
    payload = next(f for f in raw["fields"] if f["name"] == "payload")["type"]
    return next(f for f in payload["fields"] if f["name"] == name)


@pytest.mark.parametrize("subject", sorted(PART))
def test_v2_makes_the_part_nullable_and_reads_v1(subject: str) -> None:
    v1, v2 = REGISTRY.versions(subject)[:2]
    assert REGISTRY.latest(subject) is v2 and v2.version == 2
    assert _payload_field(v2.raw, PART[subject])["type"] == ["null", "int"]
    assert check_compatible(v1.raw, v2.raw) == []  # BACKWARD: new readers read v1 data
    assert any("old readers cannot read new data" in p for p in check_compatible(v1.raw, v2.raw, mode="full"))
    # bytes framed with v1's id, written before the upgrade, decode with the v2 reader
    record = {**_record(subject, 3), "schema_version": 1}
    buf = io.BytesIO()
    buf.write(HEADER.pack(MAGIC_BYTE, v1.schema_id))
    schemaless_writer(buf, v1.parsed, record)
    decoded = Codec().decode(buf.getvalue())
    assert decoded.schema_id == v1.schema_id and decoded.record["payload"][PART[subject]] == 3


@pytest.mark.parametrize("subject", sorted(PART))
def test_a_host_only_record_round_trips_under_v2(subject: str) -> None:
    codec = Codec()
    record = _record(subject, None)
    assert record["schema_version"] == 2
    data = codec.encode(record)
    assert HEADER.unpack_from(data) == (MAGIC_BYTE, REGISTRY.latest(subject).schema_id)
    assert codec.decode(data).record == record
    assert table_schema(subject).field(PART[subject]).nullable
