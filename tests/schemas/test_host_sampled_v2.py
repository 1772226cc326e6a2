"""HostSampled v2, the first real evolution: optional step time and the GPU fields v1 had no place for."""

from __future__ import annotations

import io

from fastavro import schemaless_writer

from schemas import Codec, SchemaRegistry
from schemas.arrow import table_schema
from schemas.codec import HEADER, MAGIC_BYTE
from schemas.compat import check_compatible
from schemas.events import job_step_time
from tests.streams import factories

REGISTRY = SchemaRegistry.load()
V1, V2 = REGISTRY.versions("HostSampled")[:2]
NEW_GPU_FIELDS = ("pcie_link_gen_max", "pcie_link_width_max", "throttle_reasons")


def _gpu_fields(raw: dict) -> dict[str, object]:
    payload = next(f for f in raw["fields"] if f["name"] == "payload")["type"]
    gpus = next(f for f in payload["fields"] if f["name"] == "gpus")["type"]["items"]
    return {f["name"]: f["type"] for f in gpus["fields"]}


def _v1_record(step: float) -> dict:
    """A sample as v1 knew it: no GPU fields of v2's, schema_version 1."""
    record = factories.sample(step, job=None, ts=1_700_000_000_000)
    record["schema_version"] = 1
    record["payload"]["gpus"] = [
        {k: v for k, v in g.items() if k not in NEW_GPU_FIELDS} for g in record["payload"]["gpus"]
    ]
    return record


def test_v2_is_the_latest_and_backward_compatible_with_v1() -> None:
    assert (V1.version, V2.version) == (1, 2) and REGISTRY.latest("HostSampled") is V2
    assert check_compatible(V1.raw, V2.raw) == []  # the registry's rule: new readers read v1 data
    # not FULL: a v1 reader cannot read a null step time
    assert any("old readers cannot read new data" in p for p in check_compatible(V1.raw, V2.raw, mode="full"))


def test_v2_fields() -> None:
    payload = {
        f["name"]: f for f in next(f for f in V2.raw["fields"] if f["name"] == "payload")["type"]["fields"]
    }
    assert payload["step_time_ms"]["type"] == ["null", "float"] and payload["step_time_ms"]["default"] is None
    gpu = _gpu_fields(V2.raw)
    assert list(gpu)[: len(_gpu_fields(V1.raw))] == list(_gpu_fields(V1.raw))  # v1's fields keep their order
    assert [gpu[f] for f in NEW_GPU_FIELDS] == [["null", "int"], ["null", "int"], ["null", "long"]]


def test_v1_bytes_decode_with_the_v2_reader() -> None:
    """A record framed with v1's id (written before the upgrade) reads as v2: new GPU fields null."""
    buf = io.BytesIO()
    buf.write(HEADER.pack(MAGIC_BYTE, V1.schema_id))
    schemaless_writer(buf, V1.parsed, _v1_record(0.0))
    decoded = Codec().decode(buf.getvalue())
    assert decoded.schema_id == V1.schema_id and decoded.schema_version == 1
    gpu = decoded.record["payload"]["gpus"][0]
    assert decoded.record["payload"]["gpus"][1]["gpu"] == 1
    assert decoded.record["payload"]["step_time_ms"] == 0.0  # v1's "no job": the detectors skip 0 as before
    assert gpu["pcie_link_gen"] == 5 and all(gpu[f] is None for f in NEW_GPU_FIELDS)


def test_v2_encodes_null_step_time_and_round_trips() -> None:
    codec = Codec()
    record = factories.sample(None, job=None, ts=1_700_000_000_000)
    assert record["schema_version"] == 2
    record["payload"]["gpus"][0].update(pcie_link_gen=4, throttle_reasons=0x40)  # downtrained, HW thermal
    data = codec.encode(record)
    assert HEADER.unpack_from(data) == (MAGIC_BYTE, V2.schema_id)
    assert codec.decode(data).record == record


def test_arrow_schema_has_the_new_nullable_columns() -> None:
    schema = table_schema("HostSampled")
    assert schema.field("step_time_ms").nullable
    gpu = schema.field("gpus").type.value_type
    assert all(gpu.field(f).nullable for f in NEW_GPU_FIELDS) and not gpu.field("pcie_link_gen").nullable


def test_a_step_time_of_zero_or_less_or_null_means_no_job() -> None:
    assert [job_step_time(s) for s in (None, 0.0, -3.0, 0.5, 812.0)] == [None, None, None, 0.5, 812.0]
