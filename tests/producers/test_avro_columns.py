"""The column-wise HostSampled encoder must produce exactly fastavro's bytes."""

import io

import numpy as np
import pytest
from fastavro import schemaless_writer

from producers.avro_columns import decimal, float32, varint
from producers.generator import FleetAgents
from producers.sample_batch import SampleBatch
from schemas import Codec

EDGES = [0, 1, -1, 63, 64, -64, -65, 127, 128, 8191, 8192, 2**31 - 1, -(2**31), 2**62, -(2**63), 2**63 - 1]


def _fastavro_long(value: int) -> bytes:
    buf = io.BytesIO()
    schemaless_writer(buf, {"type": "long"}, value)
    return buf.getvalue()


def _rows(segment) -> list[bytes]:
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
