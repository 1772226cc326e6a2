"""The import's IncidentReported encoder writes exactly the codec's bytes."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from producers.importer.encoding import IncidentEncoder
from producers.importer.kafka_io import leading_event_id
from schemas import Codec, HostInventoried, IncidentReported

CODEC = Codec()
ENCODER = IncidentEncoder(CODEC)
texts = st.text(max_size=40)
longs = st.integers(min_value=-(2**63), max_value=2**63 - 1)


@settings(max_examples=300, deadline=None)
@given(
    event_id=texts,
    host=texts,
    ts=longs,
    seq=longs,
    cause=texts,
    source_class=texts,
    source_text=texts,
    component=st.none() | texts,
    kind=st.none() | texts,
    start=longs,
    end=st.none() | longs,
)
def test_bytes_match_the_codec(**f: Any) -> None:
    record = IncidentReported(
        event_id=f["event_id"],
        host_id=f["host"],
        cluster="c",
        ts=f["ts"],
        agent_seq=f["seq"],
        payload={
            "cause": f["cause"],
            "source_class": f["source_class"],
            "source_text": f["source_text"],
            "component": f["component"],
            "component_kind": f["kind"],
            "start_ts": f["start"],
            "end_ts": f["end"],
        },
    ).to_record()
    assert ENCODER.encode(record) == CODEC.encode(record)
    assert CODEC.decode(ENCODER.encode(record)).record == record


def test_other_records_go_through_the_codec() -> None:
    payload = {
        "rack": "r",
        "fabric": "roce",
        "maintenance_domain": "d",
        "sku": "s",
        "install_ts": 1,
        "gpu_count": 8,
        "nic_ports": 8,
    }
    record = HostInventoried(event_id="e", host_id="h", cluster="c", ts=1, payload=payload).to_record()
    assert ENCODER.encode(record) == CODEC.encode(record)


@settings(max_examples=100, deadline=None)
@given(event_id=st.text(max_size=300))
def test_the_leading_event_id_is_read_without_decoding(event_id: str) -> None:
    payload = {
        "cause": "psu",
        "source_class": "x",
        "source_text": "",
        "component": None,
        "component_kind": None,
        "start_ts": 1,
        "end_ts": None,
    }
    value = CODEC.encode(
        IncidentReported(event_id=event_id, host_id="h", cluster="c", ts=1, payload=payload).to_record()
    )
    ids = {CODEC.schema_id("IncidentReported")}
    assert leading_event_id(value, ids) == event_id
    assert leading_event_id(value, {CODEC.schema_id("HostInventoried")}) is None
    assert leading_event_id(value[:6], ids) is None or event_id == ""
    assert leading_event_id(None, ids) is None and leading_event_id(b"\x01" + value[1:], ids) is None
