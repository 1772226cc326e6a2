"""The one column-wise decoder (``schemas.columns``) for both its users: speed, and what it takes of damaged bodies.

    python bench/bench_sample_decode.py [--repeat 60] [--archiver-hosts 100]

Decode only (``SubjectReader.read``: every HostSampled value of a batch read at once, rows checked), then
the archiver's lake table built from it (``TableBuilder.table``), the worker's whole ``SampleWire.decode``
(checks and Python columns) and one ``Codec.decode`` per value, on the same values. Then every byte 0x02
of one body (where it is a ``["null", T]`` union's branch, branch 1) set to 0x06 (branch 3): how many of
those bodies ``Codec.decode`` refuses and the decoder takes (it should be none), and whether the rest of
the batch stays column-wise. Last, the archiver's ``plan_batch`` over a fleet mix (``synthetic_records``)
column-wise against one record at a time: records per CPU second, same run.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from functools import partial

from analytics.lake.batch import plan_batch
from analytics.lake.records import ConsumedRecord
from analytics.lake.synthetic import synthetic_records
from schemas import Codec
from schemas.codec import HEADER
from schemas.columns import ColumnDecoder, SubjectReader, TableBuilder
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
    parser.add_argument(
        "--archiver-hosts", type=int, default=100, help="hosts of the archiver's mix (100 samples each)"
    )
    args = parser.parse_args()
    repeat = args.repeat
    codec = Codec()
    writer = codec.registry.latest("HostSampled")
    scenario = Scenario(hosts=192, duration_min=10, slow_hosts=(), poison=0)
    values = [value for family, _, value in scenario.records() if family == "samples"][:512]
    reader = ColumnDecoder(codec.registry).readers[writer.schema_id]
    tables = TableBuilder(reader, codec.registry)
    wire = SampleWire(codec, Policy().validation)
    print("CPU ms per batch of HostSampled values (decode only | decode + lake table | the worker's whole")
    print("SampleWire.decode with checks and Python columns | one Codec.decode per value)")
    for n in (128, 256, 512):
        some = values[:n]
        read = ms_per_call(partial(reader.read, some), repeat)
        table = ms_per_call(partial(_table, reader, tables, some), repeat)
        whole = ms_per_call(partial(wire.decode, some, NOW_MS), repeat)
        per_value = ms_per_call(partial(_per_value, codec, some), max(repeat // 4, 1))
        print(f"  {n:4} values: {read:6.2f} | {table:6.2f} | {whole:6.2f} | {per_value:6.2f}")
    taken = sum(row >= 0 for row in wire.decode(values, NOW_MS).row)
    print(f"  (SampleWire.decode takes {taken} of the {len(values)} plain values column-wise)")
    _damaged(codec, reader, wire, values)
    _archiver(codec, args.archiver_hosts, max(repeat // 12, 2))


def _damaged(codec: Codec, reader: SubjectReader, wire: SampleWire, values: list[bytes]) -> None:
    good = values[0]
    changed = [good[:i] + b"\x06" + good[i + 1 :] for i in range(HEADER.size, len(good)) if good[i] == 0x02]
    refused = [v for v in changed if not _decodes(codec, v)]
    batches = [reader.read([v, *values[1:128]]).ok for v in refused]
    taken = sum(bool(ok[0]) for ok in batches)
    rest = sum(bool(ok[1:].all()) for ok in batches)
    taken_wire = sum(wire.decode([v, *values[1:128]], NOW_MS).row[0] >= 0 for v in refused)
    print(f"bodies with one byte 0x02 → 0x06: {len(changed)}, refused by Codec.decode: {len(refused)}")
    print(
        f"  of those taken column-wise: {taken} (by the worker: {taken_wire}); batches whose other 127 rows"
    )
    print(f"  all stayed column-wise: {rest} of {len(refused)}")


def _archiver(codec: Codec, hosts: int, repeat: int) -> None:
    records = synthetic_records(n_hosts=hosts, samples_per_host=100)
    consumed = [
        ConsumedRecord(f"fleet.{i % 3}", i % 4, i, None, None, codec.encode(r)) for i, r in enumerate(records)
    ]
    column_wise = ms_per_call(partial(_plan, consumed, codec, True), repeat) / 1e3
    per_record = ms_per_call(partial(_plan, consumed, codec, False), 1) / 1e3
    n = len(consumed)
    print(f"the archiver's plan_batch over {n:,} records of the fleet mix (CPU s, records per CPU second):")
    print(f"  column-wise {column_wise:.3f} s ({n / column_wise:,.0f}/s) | one by one {per_record:.3f} s")
    print(f"  ({n / per_record:,.0f}/s): {per_record / column_wise:.2f}x")


def _table(reader: SubjectReader, tables: TableBuilder, values: list[bytes]) -> None:
    tables.table(reader.read(values))


def _plan(consumed: list[ConsumedRecord], codec: Codec, columnar: bool) -> None:
    for batch in plan_batch(consumed, codec, columnar=columnar).tables.values():
        batch.arrow()


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
