"""The column-wise HostSampled encoder must produce exactly fastavro's bytes."""

import io

import numpy as np
import pytest
from fastavro import schemaless_writer

from producers.avro_columns import NULL_INT, Field, SampleEncoder, column, decimal, float32, varint
from producers.generator import FleetAgents
from producers.sample_batch import SampleBatch
from schemas import Codec, HostSampled, SchemaRegistry

EDGES = [0, 1, -1, 63, 64, -64, -65, 127, 128, 8191, 8192, 2**31 - 1, -(2**31), 2**62, -(2**63), 2**63 - 1]


def _fastavro_long(value: int) -> bytes:
    buf = io.BytesIO()
    schemaless_writer(buf, {"type": "long"}, value)
    return buf.getvalue()


def _rows(segment) -> list[bytes]:
    if isinstance(segment, list):  # a nullable column's segments: branch, then value
        parts = [_rows(seg) for seg in segment]
        return [b"".join(row) for row in zip(*parts, strict=True)]
    matrix, lengths = segment
    return [bytes(matrix[i, : lengths[i]]) for i in range(len(lengths))]


def test_varint_matches_fastavro_on_edge_values() -> None:
    assert _rows(varint(np.array(EDGES))) == [_fastavro_long(v) for v in EDGES]


def test_varint_matches_fastavro_on_random_values() -> None:
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.integers(-(2**40), 2**40, 500), rng.integers(-300, 300, 500)])
    assert _rows(varint(values)) == [_fastavro_long(int(v)) for v in values]


def test_decimal_digits() -> None:
    values = np.array([0, 1, 9, 10, 99, 100, 999_999, 1_000_000, 10**15])
    assert _rows(decimal(values)) == [str(v).encode() for v in values]


def test_float32_is_little_endian_ieee() -> None:
    assert _rows(float32(np.array([1.5], dtype=np.float32))) == [np.float32(1.5).tobytes()]


@pytest.mark.parametrize("seed", [1, 2])
def test_sample_batches_encode_like_the_codec(build, seed: int) -> None:
    built = build("small", days=2, seed=seed)
    agents = FleetAgents(built.fleet, built.faults, built.noise, run_id="r", interval_s=3600)
    codec = Codec()
    batches = [b for t in agents.ticks() for b in t.batches if isinstance(b, SampleBatch)]
    assert batches and batches[0].encoder is not None
    for batch in batches[:6]:
        assert batch.encode(codec) == [codec.encode(r) for r in batch.records()]


def test_extreme_counters_encode_like_the_codec(build) -> None:
    built = build("small", days=1)
    agents = FleetAgents(built.fleet, built.faults, built.noise, run_id="r", interval_s=3600)
    batch = next(b for t in agents.ticks() for b in t.batches if isinstance(b, SampleBatch))
    batch.columns["symbol_errors"][:, 0] = 2**40
    batch.columns["ecc_sbe"][:, 1] = 2**31 - 1
    batch.seq[:] = 10**9
    codec = Codec()
    encoded = batch.encode(codec)
    assert encoded == [codec.encode(r) for r in batch.records()]
    assert codec.decode(encoded[0]).record["payload"]["nics"][0]["symbol_errors"] == 2**40


def test_v2_nulls_and_gpu_fields_encode_like_fastavro(build) -> None:
    """Null and non-null step time and v2's GPU fields, against fastavro with the v2 schema itself."""
    built = build("small", days=1)
    agents = FleetAgents(built.fleet, built.faults, built.noise, run_id="r", interval_s=3600)
    batch = next(b for t in agents.ticks() for b in t.batches if isinstance(b, SampleBatch))
    cols = batch.columns
    cols["step_time_ms"][0], cols["step_time_ms"][1] = np.nan, 812.5
    cols["throttle_reasons"][0, :] = NULL_INT
    cols["throttle_reasons"][1, 2] = 0x40 | 2**40
    cols["pcie_link_gen_max"][2, :] = NULL_INT
    cols["pcie_link_width_max"][2, 3] = NULL_INT
    cols["pcie_link_gen"][1, 2], cols["pcie_link_width"][1, 2] = 3, 4
    v2 = SchemaRegistry.load().versions("HostSampled")[1]
    assert v2.version == 2 and HostSampled.SCHEMA_VERSION == 2
    records = batch.records()
    p0, p1, p2 = (r["payload"] for r in records[:3])
    assert p0["step_time_ms"] is None and p1["step_time_ms"] == 812.5
    assert p0["gpus"][0]["throttle_reasons"] is None and p1["gpus"][2]["throttle_reasons"] == 0x40 | 2**40
    assert p2["gpus"][0]["pcie_link_gen_max"] is None and p2["gpus"][3]["pcie_link_width_max"] is None
    assert p1["gpus"][0]["pcie_link_gen_max"] == 5 and p1["gpus"][0]["pcie_link_width_max"] == 16
    expected = []
    for record in records:
        buf = io.BytesIO()
        schemaless_writer(buf, v2.parsed, record)
        expected.append(b"\x00" + v2.schema_id.to_bytes(4, "big") + buf.getvalue())
    codec = Codec()
    assert batch.encode(codec) == expected
    decoded = codec.decode(expected[0])
    assert decoded.schema_version == 2 and decoded.record["schema_version"] == 2


def test_v1_shaped_encoder_still_writes_v1_bytes() -> None:
    """The encoder writes what its fields say: plain floats and ints, no union branches, version 1."""
    enc = SampleEncoder(
        host_ids=["h"],
        clusters=["c"],
        job_ids=["j"],
        run_id="r",
        schema_id=2,
        schema_version=1,
        scalar_fields={"step_time_ms": Field(True), "bus_bw_gbps": Field(True)},
        gpu_fields={"gpu": Field(False)},
        nic_fields={"port": Field(False)},
    )
    cols = {
        "job": np.array([0]),
        "step_time_ms": np.array([1.5], dtype=np.float32),
        "bus_bw_gbps": np.array([2.0], dtype=np.float32),
        "gpu": np.array([[0]]),
        "port": np.array([[0]]),
    }
    raw = {
        "type": "record",
        "name": "S",
        "fields": [
            {"name": n, "type": t}
            for n, t in [
                ("event_id", "string"),
                ("event_type", "string"),
                ("schema_version", "int"),
                ("host_id", "string"),
                ("cluster", "string"),
                ("ts", "long"),
                ("agent_seq", "long"),
                ("interval_s", "int"),
                ("job_id", ["null", "string"]),
                ("step_time_ms", "float"),
                ("bus_bw_gbps", "float"),
                (
                    "gpus",
                    {
                        "type": "array",
                        "items": {"type": "record", "name": "G", "fields": [{"name": "gpu", "type": "int"}]},
                    },
                ),
                (
                    "nics",
                    {
                        "type": "array",
                        "items": {"type": "record", "name": "N", "fields": [{"name": "port", "type": "int"}]},
                    },
                ),
            ]
        ],
    }
    record = {
        "event_id": "r-h-7",
        "event_type": "HostSampled",
        "schema_version": 1,
        "host_id": "h",
        "cluster": "c",
        "ts": 1000,
        "agent_seq": 7,
        "interval_s": 10,
        "job_id": "j",
        "step_time_ms": 1.5,
        "bus_bw_gbps": 2.0,
        "gpus": [{"gpu": 0}],
        "nics": [{"port": 0}],
    }
    buf = io.BytesIO()
    schemaless_writer(buf, raw, record)
    got = enc.encode(np.array([0]), np.array([7]), np.array([1000]), 10, cols)
    assert got == [b"\x00\x00\x00\x00\x02" + buf.getvalue()]


def test_nullable_column_writes_the_union_branch() -> None:
    ints = np.array([NULL_INT, 0, -1, 2**40])
    expected = []
    for v in ints.tolist():
        buf = io.BytesIO()
        schemaless_writer(buf, ["null", "long"], None if v == NULL_INT else v)
        expected.append(buf.getvalue())
    assert _rows(column(ints, Field(False, nullable=True))) == expected
    floats = np.array([np.nan, 1.25], dtype=np.float32)
    assert _rows(column(floats, Field(True, nullable=True))) == [
        b"\x00",
        b"\x02" + np.float32(1.25).tobytes(),
    ]
