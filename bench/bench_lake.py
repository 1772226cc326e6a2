"""Benchmark the Delta lake writer (not a test): archiver throughput against a bare Parquet write, and memory
over many commits (checkpoints included; delta-rs issue 2628 reports spikes there).

    .venv/bin/python bench/bench_lake.py --batches 20                 # throughput, same-run baseline
    .venv/bin/python bench/bench_lake.py --soak-minutes 60            # RSS at the meta-48k live rate

Throughput: the same decoded batches (HostSampled and the rest of a fleet's mix, ~20k records each) are
written (a) by pyarrow as hive-partitioned Parquet files, no log, no transaction: the floor of any
writer; (b) through ``ground.delta`` as the archiver does, one Delta commit per table per batch with its
app-transaction versions; (c) by the archiver's ``Publisher`` with decoding and the quality gates, the
whole path minus Kafka. Soak: (c) at the meta-48k live sample rate with a flush every ~2 s (so each
table passes a checkpoint every ~200 s), RSS sampled every 30 s.
"""

from __future__ import annotations

import argparse
import ctypes
import datetime as dt
import gc
import os
import platform
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analytics.lake.batch import plan_batch  # noqa: E402
from analytics.lake.publish import Publisher  # noqa: E402
from analytics.lake.records import ConsumedRecord  # noqa: E402
from analytics.lake.synthetic import host_ids, synthetic_records  # noqa: E402
from ground.delta import DATE, DeltaTables, with_date  # noqa: E402
from ground.settings.lake import LakeSettings  # noqa: E402
from schemas import Codec  # noqa: E402
from tests.analytics.lake.helpers import as_consumed  # noqa: E402

HOSTS = 200


def batches(n: int, hosts: int = HOSTS) -> list[list[Any]]:
    """``n`` batches of consumed records, offsets continuing from one batch to the next."""
    out, start = [], {}
    for i in range(n):
        records = synthetic_records(
            n_hosts=hosts,
            samples_per_host=100,
            seed=i,
            start_ms=1_735_689_600_000 + i * 3_600_000,
            span_ms=3_600_000,
            id_prefix=f"b{i}",
        )
        consumed = as_consumed(records, start=start)
        for r in consumed:
            start[(r.topic, r.partition)] = r.offset + 1
        out.append(consumed)
    return out


def host_sampled_values(codec: Codec) -> list[bytes]:
    """Encoded HostSampled records of 1,000 hosts × 20 samples: the 20,000-row batch the gate and lake probes use."""
    records = synthetic_records(n_hosts=1000, samples_per_host=20, seed=3)
    return [codec.encode(r) for r in records if r["event_type"] == "HostSampled"]


def host_sampled_table(codec: Codec, values: list[bytes]) -> pa.Table:
    """The host_sampled Arrow table the archiver's ``plan_batch`` makes of ``values`` (spread over 8 partitions)."""
    plan = plan_batch([ConsumedRecord("s", i % 8, i, None, None, v) for i, v in enumerate(values)], codec)
    return plan.tables["host_sampled"].arrow()


def rss_mb(pid: int | str = "self", field: str = "VmRSS") -> float:
    """Resident memory of a process (this one by default), NaN once it is gone; ``field``: RssAnon for its heaps."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return float("nan")
    for line in status.splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (n, ctypes.c_size_t)
        for n in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


LIBC = ctypes.CDLL("libc.so.6")
LIBC.mallinfo2.restype = _MallInfo2


def heap_line() -> str:
    """Where RSS sits: glibc malloc in use / free-but-held (fragmentation), Arrow's own pool, Python objects."""
    m = LIBC.mallinfo2()
    mb = 1024 * 1024
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    anon, files = (int(status[k].split()[0]) / 1024 for k in ("RssAnon", "RssFile"))
    arena, heap, other = anon_maps()
    py_arenas, py_blocks = pymalloc_mb()
    return (
        f"anon {anon:.0f} MB (1 GiB arenas {arena:.0f}, brk heap {heap:.0f}, other maps {other:.0f} of which "
        f"Python's arenas {py_arenas:.0f} with {py_blocks:.0f} in blocks), files {files:.0f} MB; "
        f"malloc in use {(m.uordblks + m.hblkhd) / mb:.0f} MB, held free {m.fordblks / mb:.0f} MB, "
        f"arrow {pa.total_allocated_bytes() / mb:.0f} MB, {len(gc.get_objects()):,} py objects"
    )


def pymalloc_mb() -> tuple[float, float]:
    """Python's small-object allocator: MB in its arenas now (1 MiB mmaps, counted in "other maps"), and in use by
    its blocks; arenas far above blocks means fragmentation (an arena is freed only once all its blocks are)."""
    with tempfile.TemporaryFile() as out:
        saved = os.dup(2)
        try:
            os.dup2(out.fileno(), 2)
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        text = out.read().decode(errors="replace")
    arenas = blocks = 0.0
    for line in text.splitlines():
        if "arenas * " in line and "bytes/arena" in line:
            arenas = int(line.split("=")[1].replace(",", "")) / (1 << 20)
        elif line.startswith("# bytes in allocated blocks"):
            blocks = int(line.split("=")[1].replace(",", "")) / (1 << 20)
    return arenas, blocks


def anon_maps() -> tuple[float, float, float]:
    """Resident MB of anonymous mappings: reservations of 512 MB or more (mimalloc's arenas, Arrow's default pool),
    the brk heap (glibc's main arena), and every other one (glibc thread arenas, the Rust libraries' jemalloc)."""
    out = [0.0, 0.0, 0.0]
    kind = None
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()
        if "-" in head[0] and len(head) >= 5 and ":" in head[3]:
            lo, hi = (int(x, 16) for x in head[0].split("-"))
            name = head[5] if len(head) > 5 else ""
            kind = 1 if name == "[heap]" else None if name else 0 if hi - lo >= 512 << 20 else 2
        elif head[0] == "Rss:" and kind is not None:
            out[kind] += int(head[1]) / 1024
    return out[0], out[1], out[2]


def timed(label: str, fn: Any) -> float:
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"  {label}: {wall:.2f} s wall, {cpu:.2f} s CPU")
    return cpu


def throughput(n: int, hosts: int = HOSTS) -> dict[str, float]:
    data = batches(n, hosts)
    codec = Codec()
    plans = [plan_batch(b, codec) for b in data]
    tables = [{t: tb.arrow() for t, tb in p.tables.items()} for p in plans]
    rows = sum(t.num_rows for batch in tables for t in batch.values())
    records = sum(len(b) for b in data)
    print(f"{n} batches, {records:,} records, {rows:,} rows")
    root = Path(tempfile.mkdtemp(prefix="bench-lake-"))
    try:

        def parquet() -> None:
            for i, batch in enumerate(tables):
                for name, table in batch.items():
                    ds.write_dataset(
                        with_date(table),
                        root / "parquet" / name,
                        format="parquet",
                        partitioning=[DATE],
                        partitioning_flavor="hive",
                        basename_template=f"b{i}-{{i}}.parquet",
                        existing_data_behavior="overwrite_or_ignore",
                        file_options=ds.ParquetFileFormat().make_write_options(compression="zstd"),
                    )

        def delta() -> None:
            lake = DeltaTables(root / "delta")
            for batch, plan in zip(tables, plans, strict=True):
                versions = {f"g:{tp.topic}:{tp.partition}": r.last + 1 for tp, r in plan.ranges.items()}
                for name, table in batch.items():
                    lake.append(name, with_date(table), partition_by=[DATE], versions=versions)

        def archiver() -> None:
            settings = LakeSettings(path=str(root / "archiver"))
            publisher = Publisher(
                DeltaTables(root / "archiver"), settings, {}, known_hosts=set(host_ids(hosts))
            )
            for b in data:
                publisher.publish(plan_batch(b, codec))

        cpu = {
            "parquet": timed("bare pyarrow Parquet (hive by date)", parquet),
            "delta": timed("Delta append per table, app transactions", delta),
            "archiver": timed("archiver Publisher (decode + gates + Delta)", archiver),
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)
    for k, v in cpu.items():
        print(f"  {k}: {records / v:,.0f} records per CPU second")
    print(f"  Delta / bare Parquet throughput: {cpu['parquet'] / cpu['delta']:.2f}")
    print(f"  archiver path / bare Parquet: {cpu['parquet'] / cpu['archiver']:.2f}")
    return cpu


def soak(minutes: float, rate: float, hosts: int, gates: bool = True, trim: bool = False) -> None:
    """Publish at ``rate`` records per second for ``minutes``, RSS each 30 s; a batch is ~105 records per host.

    ``trim`` hands glibc's free pages back after every flush (``malloc_trim``), which tells allocator
    fragmentation from memory that is really held.
    """
    pool = batches(4, hosts=hosts)
    codec = Codec()
    root = Path(tempfile.mkdtemp(prefix="bench-lake-soak-"))
    settings = LakeSettings(path=str(root), quality={"enabled": gates})
    publisher = Publisher(DeltaTables(root), settings, {}, known_hosts=set(host_ids(hosts)))
    shift: dict[tuple[str, int], int] = {}
    start = time.monotonic()
    samples: list[tuple[float, float, int]] = []
    commits = records = 0
    next_sample = 0.0
    try:
        while (elapsed := time.monotonic() - start) < minutes * 60:
            batch = pool[commits % len(pool)]
            base = dict(shift)
            moved = [r._replace(offset=r.offset + base.get((r.topic, r.partition), 0)) for r in batch]
            plan = plan_batch(moved, codec)
            for tp, rng in plan.ranges.items():
                shift[(tp.topic, tp.partition)] = max(shift.get((tp.topic, tp.partition), 0), rng.last + 1)
            publisher.publish(plan)
            if trim:
                LIBC.malloc_trim(0)
            commits += 1
            records += len(batch)
            if elapsed >= next_sample:
                samples.append((elapsed, rss_mb(), commits))
                print(
                    f"  {elapsed / 60:5.1f} min: RSS {samples[-1][1]:.0f} MB after {commits} flushes, {records:,} records; {heap_line()}",
                    flush=True,
                )
                next_sample += 30
            time.sleep(max(0.0, commits * len(batch) / rate - (time.monotonic() - start)))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    at5 = next((s for s in samples if s[0] >= 300), samples[-1])
    print(f"RSS at 5 min {at5[1]:.0f} MB, at the end {samples[-1][1]:.0f} MB: {samples[-1][1] / at5[1]:.3f}x")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument(
        "--hosts",
        type=int,
        default=HOSTS,
        help="hosts per batch: ~105 records each (950: the default 100k-record flush)",
    )
    parser.add_argument("--soak-minutes", type=float, default=0.0)
    parser.add_argument(
        "--rate", type=float, default=614.0, help="records/s in the soak (meta-48k live: 6,144 hosts / 10 s)"
    )
    parser.add_argument(
        "--no-gates", action="store_true", help="soak without the quality gates (tells GX from Delta)"
    )
    parser.add_argument(
        "--trim", action="store_true", help="malloc_trim after every flush (tells fragmentation from leaks)"
    )
    parser.add_argument(
        "--soak-hosts", type=int, default=12, help="hosts per soak batch (12: a flush every ~2 s)"
    )
    args = parser.parse_args()
    print(f"{platform.node()} {platform.python_version()} {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC")
    if args.soak_minutes:
        soak(args.soak_minutes, args.rate, args.soak_hosts, gates=not args.no_gates, trim=args.trim)
    else:
        throughput(args.batches, args.hosts)


if __name__ == "__main__":
    main()
