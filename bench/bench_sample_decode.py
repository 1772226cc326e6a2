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

import numpy as np

from analytics.lake.columnar import BlockDecoder
from schemas import Codec
from schemas.codec import HEADER
from streams.avro_columns import Plan, Reader, compile_plan, read_all
from streams.core.policy import Policy
from streams.sample_wire import SampleWire
from streams.testing import START_TS, Scenario

NOW_MS = START_TS + 3_600_000  # the values' ts lie within the hour before


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
    scenario = Scenario(hosts=192, duration_min=10, slow_hosts=(), poison=0)
    values = [value for family, _, value in scenario.records() if family == "samples"][:512]
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
    taken = sum(row >= 0 for row in wire.decode(values, NOW_MS).row)
    print(f"  (SampleWire.decode takes {taken} of the {len(values)} plain values column-wise)")
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
