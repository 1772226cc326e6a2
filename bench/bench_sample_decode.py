"""The two column-wise Avro decoders on the same HostSampled bodies: speed, and what each takes of a damaged body.

    python bench/bench_sample_decode.py [--repeat 60]

``analytics.lake.columnar.BlockDecoder`` (the archiver: the bodies as one block of an in-memory Avro
container, read by Polars) against ``streams.avro_columns`` (the detect worker: NumPy, field by field),
decode only, then the worker's whole ``SampleWire.decode`` and one ``Codec.decode`` per value. Then every
byte 0x02 of one body (where it is a ``["null", T]`` union's branch, branch 1) set to 0x06 (branch 3):
how many of those bodies ``Codec.decode`` refuses but each decoder takes. Polars prints a panic for some
of them on stderr; those are caught.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from analytics.lake.columnar import BlockDecoder
from schemas import Codec, HostSampled
from schemas.codec import HEADER
from streams.avro_columns import Plan, Reader, compile_plan, read_all
from streams.core.policy import Policy
from streams.sample_wire import SampleWire

NOW_MS = 1_780_000_000_000


def sample(n: int) -> dict[str, Any]:
    """A plain 8-GPU, 1-port sample of host ``n % 192``."""
    gpu = {
        "temp_c": 60.0,
        "power_w": 600.0,
        "sm_clock_mhz": 1980,
        "util_pct": 95.0,
        "ecc_sbe": 0,
        "ecc_dbe": 0,
        "retired_pages": 0,
        "pcie_replay": 0,
        "pcie_link_gen": 5,
        "pcie_link_width": 16,
        "nvlink_errors": 0,
        "pcie_link_gen_max": 5,
        "pcie_link_width_max": 16,
        "throttle_reasons": 0,
    }
    nic = {
        "port": 0,
        "rx_gbps": 1.0,
        "tx_gbps": 1.0,
        "symbol_errors": 0,
        "link_downed": 0,
        "carrier_changes": 0,
    }
    payload = {
        "interval_s": 60,
        "job_id": "j1",
        "step_time_ms": 1000.0,
        "bus_bw_gbps": 380.0,
        "gpus": [gpu | {"gpu": g} for g in range(8)],
        "nics": [nic],
    }
    return HostSampled(
        event_id=f"e{n}", host_id=f"h{n % 192}", cluster="c0", ts=NOW_MS - n, agent_seq=n, payload=payload
    ).to_record()


def ms_per_call(fn: Callable[[], object], repeat: int) -> float:
    fn()
    start = time.process_time()
    for _ in range(repeat):
        fn()
    return (time.process_time() - start) / repeat * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=60, help="calls timed per figure")
    repeat = parser.parse_args().repeat
    codec = Codec()
    writer = codec.registry.latest("HostSampled")
    values = [codec.encode(sample(n)) for n in range(512)]
    bodies = [memoryview(v)[HEADER.size :] for v in values]
    block, plan = BlockDecoder(codec.registry), compile_plan(writer.parsed)
    wire = SampleWire(codec, Policy().validation)
    print("CPU ms per batch (decode only: Polars block → Arrow | NumPy read_all; then the worker's whole")
    print("SampleWire.decode with checks and Python columns | one Codec.decode per value)")
    for n in (128, 256, 512):
        some, their_bodies = values[:n], bodies[:n]
        polars = ms_per_call(partial(block.decode, writer.schema_id, their_bodies), repeat)
        numpy = ms_per_call(partial(_numpy_read, some, plan), repeat)
        whole = ms_per_call(partial(wire.decode, some, NOW_MS), repeat)
        per_value = ms_per_call(partial(_per_value, codec, some), max(repeat // 4, 1))
        print(f"  {n:4} values: {polars:6.2f} | {numpy:6.2f} | {whole:6.2f} | {per_value:6.2f}")
    good = values[0]
    changed = [
        good[: HEADER.size + i] + b"\x06" + good[HEADER.size + i + 1 :]
        for i, byte in enumerate(bodies[0])
        if byte == 0x02
    ]
    refused = [v for v in changed if not _decodes(codec, v)]
    taken_block = sum(
        block.decode(writer.schema_id, [memoryview(v)[HEADER.size :], *bodies[1:128]]) is not None
        for v in refused
    )
    taken_wire = sum(wire.decode([v, *values[1:128]], NOW_MS).row[0] >= 0 for v in refused)
    print(f"bodies with one byte 0x02 → 0x06: {len(changed)}, refused by Codec.decode: {len(refused)}")
    print(f"  of those taken by the Polars block: {taken_block}; by the worker's NumPy reader: {taken_wire}")


def _numpy_read(values: list[bytes], plan: Plan) -> None:
    """The worker's reader over the values after their header, as ``SampleWire.decode`` reads them."""
    reader = Reader(values)
    reader.advance(HEADER.size, np.ones(len(values), dtype=bool))
    _, _ = read_all(reader, plan)
    assert not reader.bad.any() and (reader.pos == reader.end).all()


def _per_value(codec: Codec, values: list[bytes]) -> None:
    for value in values:
        codec.decode(value)


def _decodes(codec: Codec, value: bytes) -> bool:
    try:
        codec.decode(value)
    except Exception:  # any refusal: a DecodeError, or fastavro's own on a broken body
        return False
    return True


if __name__ == "__main__":
    main()
