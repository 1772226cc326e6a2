"""Benchmark the archiver over a Kafka backlog (not a test): records/s, CPU use and where wall time goes.

    nice -n 10 .venv/bin/python bench/bench_archiver_kafka.py --records 600000 --per-record-runs 1
    nice -n 10 .venv/bin/python bench/bench_archiver_kafka.py --bootstrap 127.0.0.1:19092 --no-gates

Starts a LocalBroker on free ports (or uses --bootstrap), creates the archived topics with the real
partition counts under a random prefix, fills them with the synthetic fleet mix (mostly HostSampled,
inventory first) through the simulator's producer settings (zstd batches), then runs the real ``Archiver`` until idle, once per --runs (a fresh lake and
consumer group each: every run reads the same backlog). Reported per run: records/s over wall time,
CPU seconds of this process (the broker is another process), CPU/wall, and the wall time spent inside
``consumer.poll``, inside the inventory catch-up and inside each flush's decode+publish.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
from kafka import KafkaConsumer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from archiver_feed import fill, live, settings_on
from bench_lake import LIBC, anon_maps, heap_line, rss_mb  # noqa: E402
from benchkit import exit_on_sigterm  # noqa: E402

from analytics.lake import Archiver  # noqa: E402
from analytics.lake import archiver as archiver_module  # noqa: E402
from analytics.lake.batch import plan_batch  # noqa: E402
from analytics.lake.publish import Publisher  # noqa: E402
from analytics.lake.quarantine import quarantine_entries  # noqa: E402
from fleetpulse.broker import LocalBroker  # noqa: E402
from fleetpulse.supervisor import free_ports  # noqa: E402
from ground import delta  # noqa: E402
from ground.kafka import admin  # noqa: E402
from ground.settings import Settings  # noqa: E402
from schemas import Codec  # noqa: E402


class Timers:
    def __init__(self) -> None:
        self.poll_s = 0.0
        self.poll_cpu_s = 0.0  # CPU of the main thread inside polls (parsing fetched batches)
        self.poll_queued_s = 0.0
        self.polls = 0
        self.empty_polls = 0
        self.catch_up_s = 0.0
        self.flushes: list[tuple[int, float]] = []  # (records, seconds) per flush
        self.flush_cpu_s = 0.0  # CPU of the main thread inside flushes
        self.flush_queued_s = (
            0.0  # main thread runnable but waiting for a core (run-queue wait) inside flushes
        )
        self.plan_s = 0.0  # decoding and Arrow building (plan_batch)
        self.publish_s = 0.0  # quality gates and Delta writes (Publisher.publish)


def queued_s() -> float:
    """Run-queue wait of the calling thread so far: runnable, but other processes had the cores."""
    try:
        return int(Path("/proc/thread-self/schedstat").read_text().split()[1]) / 1e9
    except OSError:
        return 0.0


def timed(fn: Any, field: str) -> Any:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            timers = TimedArchiver.timers
            setattr(timers, field, getattr(timers, field) + time.perf_counter() - t)

    return wrapper


class TimedConsumer(KafkaConsumer):  # type: ignore[misc]
    timers = Timers()
    overrides: dict[str, Any] = {}  # consumer settings a run tries on top of the archiver's

    def __init__(self, **config: Any) -> None:
        super().__init__(**{**config, **self.overrides})

    def poll(self, *args: Any, **kwargs: Any) -> Any:
        t, cpu, queued = time.perf_counter(), time.thread_time(), queued_s()
        out = super().poll(*args, **kwargs)
        self.timers.poll_s += time.perf_counter() - t
        self.timers.poll_cpu_s += time.thread_time() - cpu
        self.timers.poll_queued_s += queued_s() - queued
        self.timers.polls += 1
        self.timers.empty_polls += not out
        return out


class TimedArchiver(Archiver):
    timers = Timers()
    memory_every_s = 0.0  # print RSS and where it sits after a flush, at most this often (0: never)
    trim = False  # hand glibc's free pages back after every flush (tells fragmentation from held memory)
    release_probe = (
        False  # after each memory line, have Arrow's pool let go of unused memory and print RSS again
    )
    _started = _next_memory = 0.0

    def _flush(self, consumer: Any, tps: list[Any], publisher: Any, buffer: list[Any], *rest: Any) -> None:
        t, cpu, queued = time.perf_counter(), time.thread_time(), queued_s()
        n = len(buffer)
        super()._flush(consumer, tps, publisher, buffer, *rest)
        self.timers.flushes.append((n, time.perf_counter() - t))
        self.timers.flush_cpu_s += time.thread_time() - cpu
        self.timers.flush_queued_s += queued_s() - queued
        if self.trim:
            LIBC.malloc_trim(0)
        if self.memory_every_s and time.perf_counter() >= self._next_memory:
            self._started = self._started or t
            self._next_memory = time.perf_counter() + self.memory_every_s
            minutes = (time.perf_counter() - self._started) / 60
            print(
                f"  {minutes:5.1f} min: RSS {rss_mb():.0f} MB after a {n:,}-record flush, peak {rss_mb(field='VmHWM'):.0f} MB "
                f"since the last line ({len(self.timers.flushes)} flushes, {len(publisher.known_hosts or ()):,} known hosts); "
                f"{heap_line()}",
                flush=True,
            )
            if self.release_probe:
                pa.default_memory_pool().release_unused()
                print(
                    f"        after Arrow's pool let go of unused memory: RSS {rss_mb():.0f} MB, "
                    f"1 GiB arenas {anon_maps()[0]:.0f} MB",
                    flush=True,
                )
            Path("/proc/self/clear_refs").write_text("5")  # the kernel restarts VmHWM from the current RSS

    def _inventory_catch_up(self, consumer: Any, tps: list[Any]) -> list[Any]:
        t = time.perf_counter()
        out = super()._inventory_catch_up(consumer, tps)
        self.timers.catch_up_s += time.perf_counter() - t
        return out


def run_once(settings: Settings, lake_dir: Path, gates: bool, seconds: float | None) -> dict[str, Any]:
    lake = settings.lake.model_copy(
        update={
            "path": str(lake_dir),
            "group_id": f"bench-archiver-{uuid.uuid4().hex[:6]}",
            "quality": settings.lake.quality.model_copy(update={"enabled": gates}),
        }
    )
    run_settings = settings.model_copy(update={"lake": lake})
    TimedConsumer.timers = TimedArchiver.timers = timers = Timers()
    archiver = TimedArchiver(run_settings, consumer_factory=TimedConsumer)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    stats = archiver.run(until_idle=seconds is None, max_seconds=seconds)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    flush_s = [s for _, s in timers.flushes]
    return {
        "records": stats.records,
        "wall_s": wall,
        "cpu_s": cpu,
        "rate": stats.records / wall,
        "cpu_util": cpu / wall,
        "poll_s": timers.poll_s,
        "poll_cpu_s": timers.poll_cpu_s,
        "poll_queued_s": timers.poll_queued_s,
        "polls": timers.polls,
        "empty_polls": timers.empty_polls,
        "catch_up_s": timers.catch_up_s,
        "flush_s": sum(flush_s),
        "flushes": len(flush_s),
        "flush_median_s": statistics.median(flush_s) if flush_s else 0.0,
        "flush_cpu_s": timers.flush_cpu_s,
        "flush_queued_s": timers.flush_queued_s,
        "plan_s": timers.plan_s,
        "publish_s": timers.publish_s,
        "quarantined": stats.quarantined_rows,
        "why": why_quarantined(lake_dir),
    }


def why_quarantined(lake_dir: Path) -> str:
    """The failed expectations of the run's quarantined slices, with how many slices failed each."""
    counts: dict[str, int] = {}
    for entry in quarantine_entries(delta.DeltaTables(lake_dir)):
        for name in entry.failed_expectations:
            key = f"{entry.table}: {name}"
            counts[key] = counts.get(key, 0) + 1
    return "; ".join(f"{k} x{v}" for k, v in sorted(counts.items())) or "none"


def describe(label: str, r: dict[str, Any]) -> str:
    return (
        f"{label}: {r['records']:.0f} records in {r['wall_s']:.1f} s wall = {r['rate']:.0f} rec/s; "
        f"CPU {r['cpu_s']:.1f} s ({r['cpu_util']:.2f} of a core); "
        f"poll {r['poll_s']:.1f} s over {r['polls']:.0f} polls ({r['empty_polls']:.0f} empty; main thread CPU "
        f"{r['poll_cpu_s']:.1f} s, waiting for a core {r['poll_queued_s']:.1f} s), "
        f"inventory catch-up {r['catch_up_s']:.1f} s, "
        f"flush {r['flush_s']:.1f} s over {r['flushes']:.0f} flushes (median {r['flush_median_s']:.2f} s; "
        f"decode+Arrow {r['plan_s']:.1f} s, gates+Delta {r['publish_s']:.1f} s; main thread CPU "
        f"{r['flush_cpu_s']:.1f} s, waiting for a core {r['flush_queued_s']:.1f} s); "
        f"quarantined {r['quarantined']:.0f} rows ({r['why']})"
    )


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--records", type=int, default=600_000, help="backlog size (the fleet mix, ~99%% HostSampled)"
    )
    p.add_argument("--runs", type=int, default=1, help="archiver runs over the same backlog")
    p.add_argument(
        "--partition-fetch-mb",
        type=float,
        nargs="*",
        default=[],
        help="after the default runs, one run per value with max_partition_fetch_bytes set to it",
    )
    p.add_argument(
        "--per-record-runs",
        type=int,
        default=0,
        help="more runs decoding one record at a time (the baseline)",
    )
    p.add_argument("--bootstrap", help="an existing broker (default: start a LocalBroker on free ports)")
    p.add_argument("--no-gates", action="store_true", help="quality gates off (production runs them)")
    p.add_argument(
        "--live-rate", type=float, default=0.0, help="records/s a producer process adds during each run"
    )
    p.add_argument(
        "--live-records", type=int, default=10_000_000, help="the live producer stops after this many"
    )
    p.add_argument(
        "--fleet",
        type=int,
        default=0,
        help="the live producer cycles over this many hosts (0: new hosts until it stops)",
    )
    p.add_argument(
        "--seconds", type=float, help="run the archiver this long (default: until idle; needed with live)"
    )
    p.add_argument(
        "--memory-every", type=float, default=0.0, help="print RSS after a flush at most every S seconds"
    )
    p.add_argument(
        "--trim", action="store_true", help="malloc_trim after every flush (tells fragmentation from leaks)"
    )
    p.add_argument(
        "--release-probe",
        action="store_true",
        help="after each memory line, release_unused() on Arrow's pool and print RSS again",
    )
    p.add_argument(
        "--reopen-every",
        type=int,
        default=delta.REOPEN_EVERY,
        help="reopen each Delta table after this many appends",
    )
    return p.parse_args()


def main() -> None:
    args = parse_args()
    exit_on_sigterm()
    columnar = {"on": True}  # the per-record runs decode one record at a time, as before the block decoder

    def plan(records: Any, codec: Codec, **kwargs: Any) -> Any:  # kwargs: the archiver's stored ids
        return plan_batch(records, codec, columnar=columnar["on"], **kwargs)

    archiver_module.plan_batch = timed(plan, "plan_s")  # type: ignore[attr-defined]
    Publisher.publish = timed(Publisher.publish, "publish_s")  # type: ignore[method-assign]
    TimedArchiver.memory_every_s, TimedArchiver.trim = args.memory_every, args.trim
    TimedArchiver.release_probe = args.release_probe
    delta.REOPEN_EVERY = args.reopen_every
    print("command: python bench/bench_archiver_kafka.py " + " ".join(sys.argv[1:]))
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    base = Settings.load()
    work = Path(tempfile.mkdtemp(prefix="bench-archiver-"))
    broker = None
    try:
        bootstrap = args.bootstrap
        if bootstrap is None:
            port, controller = free_ports(2)
            broker = LocalBroker(
                base.broker.model_copy(
                    update={"port": port, "controller_port": controller, "data_dir": work / "kafka"}
                )
            )
            broker.start()
            bootstrap = broker.bootstrap_servers
        settings = settings_on(base, bootstrap, f"bench{uuid.uuid4().hex[:6]}.")
        topics = settings.topics
        admin.create_topics(settings)
        t = time.perf_counter()
        produced = fill(settings, args.records)
        print(
            f"backlog: {produced} records on {sum(s.partitions for s in topics.all())} partitions "
            f"in {time.perf_counter() - t:.0f} s"
        )
        variants = (
            [(None, True)] * args.runs
            + [(int(mb * 1024 * 1024), True) for mb in args.partition_fetch_mb]
            + [(None, False)] * args.per_record_runs
        )
        for i, (fetch_bytes, columnar["on"]) in enumerate(variants):
            TimedConsumer.overrides = (
                {} if fetch_bytes is None else {"max_partition_fetch_bytes": fetch_bytes}
            )
            producer = (
                live(settings, args.live_rate, args.live_records, args.fleet) if args.live_rate else None
            )
            try:
                result = run_once(settings, work / f"lake{i}", gates=not args.no_gates, seconds=args.seconds)
            finally:
                if producer is not None:
                    producer.terminate()
                    producer.wait(30)
            decoding = "column-wise" if columnar["on"] else "per record"
            label = f"run {i + 1} ({'no gates' if args.no_gates else 'gates on'}, {decoding}, {TimedConsumer.overrides or 'defaults'})"
            print(describe(label, result), flush=True)
            shutil.rmtree(work / f"lake{i}", ignore_errors=True)
        admin.delete_topics(settings, [s.name for s in topics.all()])
    finally:
        if broker is not None:
            broker.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
