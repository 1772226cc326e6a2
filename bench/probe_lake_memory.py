"""Repeat one step of the archiver's flush in a loop and print RSS (not a test): which step, if any, grows.

    .venv/bin/python bench/probe_lake_memory.py decode --times 3000
    .venv/bin/python bench/probe_lake_memory.py append --times 400
    .venv/bin/python bench/probe_lake_memory.py gate --times 400
    .venv/bin/python bench/probe_lake_memory.py gate-fails --times 400

``decode``: the column-wise decode of 5,000 HostSampled values into their lake table (``schemas.columns``, as
``plan_batch`` does it). ``append``: one host_sampled Delta append of a 20,000-row batch with 26 app-transaction versions
(``DeltaTables.append``, as ``Publisher`` does it; ``--reopen-every`` sets how often the table is reopened).
``gate``: the quality gate on that batch with 48,000 known hosts (``QualityGate.validate``, as ``Publisher`` does it);
``gate-fails``: the same with four of the batch's hosts unknown, so each run fails and collects the details again.
Arrow's pool lets go of its free pages before each reading, as the archiver does after each flush.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_lake import host_sampled_table, host_sampled_values, rss_mb  # noqa: E402

from analytics.lake.batch import column_readers  # noqa: E402
from analytics.lake.synthetic import host_ids  # noqa: E402
from analytics.quality.gate import QualityGate  # noqa: E402
from ground import delta  # noqa: E402
from ground.delta import DeltaTables, with_date  # noqa: E402
from schemas import Codec  # noqa: E402
from schemas.codec import HEADER  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("step", choices=["decode", "append", "gate", "gate-fails"])
    p.add_argument("--times", type=int, default=400)
    p.add_argument("--every", type=int, default=25, help="print RSS every this many repeats")
    p.add_argument("--reopen-every", type=int, default=delta.REOPEN_EVERY)
    args = p.parse_args()
    codec = Codec()
    values = host_sampled_values(codec)
    schema_id = HEADER.unpack_from(values[0])[1]
    reader, tables = column_readers(codec)[schema_id]
    chunk = values[:5000]
    table = with_date(host_sampled_table(codec, values))
    delta.REOPEN_EVERY = args.reopen_every
    lake = DeltaTables(tempfile.mkdtemp(prefix="probe-lake-"))
    gate = QualityGate()
    known = {*host_ids(48_000), *table.column("host_id").to_pylist()}
    unknown = sorted(set(table.column("host_id").to_pylist()))[:4]
    now = dt.datetime.now(dt.UTC)
    print(f"{args.step}: {len(chunk):,} values per decode, {table.num_rows:,} rows per append or gate run")
    t0 = time.perf_counter()
    for i in range(1, args.times + 1):
        if args.step == "decode":
            tables.table(reader.read(chunk))
        elif args.step == "gate":
            assert gate.validate("host_sampled", table, now, known).success
        elif args.step == "gate-fails":
            assert not gate.validate("host_sampled", table, now, known.difference(unknown)).success
        else:
            lake.append(
                "host_sampled", table, partition_by=[delta.DATE], versions={f"g-s-{p}": i for p in range(26)}
            )
        if i % args.every == 0:
            gc.collect()
            pa.default_memory_pool().release_unused()
            print(f"  {i:5d}: RSS {rss_mb():.0f} MB ({time.perf_counter() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
