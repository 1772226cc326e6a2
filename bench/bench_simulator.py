"""Benchmark the fleet simulator (not a test): generation, live meta-48k into Kafka at 20x,
90 days of meta-48k fast-forward into Kafka, and kafka-python vs confluent-kafka on the same records.

Starts its own Kafka broker (fleetpulse's LocalBroker on free ports, data in a temp dir) unless
KAFKA_BOOTSTRAP_SERVERS is set; topics are unique per run and deleted afterwards.

    .venv/bin/python bench/bench_simulator.py --md docs/benchmarks/simulator-run.md
    .venv/bin/python bench/bench_simulator.py --quick          # a smaller, faster pass

confluent-kafka is bench-only (`pip install confluent-kafka`); without it that section is skipped.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import resource
import socket
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kafka
from kafka import KafkaProducer

try:
    import confluent_kafka  # the bench extra; its section is skipped without it
except ImportError:
    confluent_kafka = None

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchkit import exit_on_sigterm  # noqa: E402

from fleetpulse.broker import LocalBroker  # noqa: E402
from ground.kafka import admin  # noqa: E402
from ground.settings import Settings  # noqa: E402
from producers.runner import SimulationRequest, run_simulation  # noqa: E402
from producers.sample_batch import SampleBatch  # noqa: E402
from producers.sinks.base import NullSink  # noqa: E402
from producers.sinks.kafka import producer_config  # noqa: E402
from schemas import Codec, topic_family  # noqa: E402

META_HOSTS = 6144
LIVE_REQUIRED = META_HOSTS / (10 / 20)  # 6,144 samples per 10 s sim tick at 20x = 12,288 samples/s


@dataclass
class Report:
    lines: list[str] = field(default_factory=list)

    def add(self, text: str = "") -> None:
        print(text, flush=True)
        self.lines.append(text)


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def free_ports(count: int) -> list[int]:
    with contextlib.ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(count)]
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]


@contextlib.contextmanager
def kafka_cluster() -> Iterator[tuple[str, str]]:
    external = os.environ.get("KAFKA_BOOTSTRAP_SERVERS")
    if external:
        yield external, "external (KAFKA_BOOTSTRAP_SERVERS)"
        return
    base = Settings.load().broker
    port, controller = free_ports(2)
    with tempfile.TemporaryDirectory(prefix="fleetpulse-bench-") as data:
        broker = LocalBroker(
            base.model_copy(update={"port": port, "controller_port": controller, "data_dir": Path(data)})
        )
        broker.start()
        try:
            yield (
                broker.bootstrap_servers,
                f"local single-node KRaft broker (Kafka {base.kafka_version}, heap {base.heap})",
            )
        finally:
            broker.stop()


def settings_for(bootstrap: str, tag: str) -> Settings:
    topics = {
        f: {"name": f"bench.{tag}.{f}.{uuid.uuid4().hex[:6]}", "partitions": 6}
        for f in ("inventory", "samples", "errors")
    }
    return Settings.load(kafka={"bootstrap_servers": bootstrap}, topics=topics)


def drop_topics(settings: Settings) -> None:
    with contextlib.suppress(Exception):
        admin.delete_topics(
            settings,
            [settings.topics.inventory.name, settings.topics.samples.name, settings.topics.errors.name],
        )


class CaptureSink:
    """Keeps (family, key, value) of the first ``limit`` HostSampled records: the producer comparison's input."""

    name = "capture"

    def __init__(self, limit: int) -> None:
        self.codec = Codec()
        self.limit = limit
        self.records: list[tuple[str, bytes, bytes]] = []

    def write(self, batch: Any) -> None:
        if len(self.records) >= self.limit:
            return
        for et, key, value in zip(batch.event_types(), batch.keys(), batch.encode(self.codec), strict=True):
            self.records.append((topic_family(et), key, value))

    def close(self) -> None:
        return None


# -- sections ----------------------------------------------------------------------------------


def bench_generation(report: Report, settings: Settings, gen_ticks: int, ff_days: float) -> None:
    report.add("## 1. Generation alone (sink null: events built and Avro-encoded, then dropped)")
    report.add()
    report.add("| workload | events | wall s | CPU s | events/s (wall) | µs CPU/event |")
    report.add("|---|---:|---:|---:|---:|---:|")
    for label, request in (
        (
            f"meta-48k, 10 s samples (live shape), {gen_ticks} ticks",
            SimulationRequest(preset="meta-48k", days=gen_ticks * 10 / 86_400, interval_s=10, sink="null"),
        ),
        (
            f"meta-48k, 6 h samples (fast-forward), {ff_days:g} days",
            SimulationRequest(preset="meta-48k", days=ff_days, sink="null"),
        ),
    ):
        c0, t0 = cpu_s(), time.perf_counter()
        result = run_simulation(settings, request, sink=NullSink())
        wall, cpu = time.perf_counter() - t0, cpu_s() - c0
        report.add(
            f"| {label} | {result.total:,} | {wall:.1f} | {cpu:.1f} | {result.total / wall:,.0f} | {1e6 * cpu / result.total:.1f} |"
        )
    report.add()
    report.add(
        "Wall includes fleet building and the fault/noise schedules (about 2 s for meta-48k); generation is one thread."
    )
    report.add()

    # the column-wise HostSampled encoder vs fastavro record by record, on the same tick
    capture: list[SampleBatch] = []

    class Grab:
        name = "grab"

        def write(self, batch: Any) -> None:
            if isinstance(batch, SampleBatch) and not capture:
                capture.append(batch)

        def close(self) -> None:
            return None

    run_simulation(
        settings,
        SimulationRequest(preset="meta-48k", days=20 / 86_400, interval_s=10, sink="null"),
        sink=Grab(),
    )
    batch, codec = capture[0], Codec()
    t0 = time.perf_counter()
    fast = batch.encode(codec)
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    records = batch.records()
    t_records = time.perf_counter() - t0
    t0 = time.perf_counter()
    slow = [codec.encode(r) for r in records]
    t_slow = time.perf_counter() - t0
    assert fast == slow, "column encoder disagrees with fastavro"
    n = len(batch)
    report.add(
        f"HostSampled encoding of one meta-48k tick ({n:,} records, identical bytes): column-wise "
        f"{1e6 * t_fast / n:.1f} µs/record vs dict building {1e6 * t_records / n:.1f} + fastavro "
        f"{1e6 * t_slow / n:.1f} µs/record: **{(t_records + t_slow) / t_fast:.0f}x faster**."
    )
    report.add()


def bench_live(report: Report, bootstrap: str, seconds: float) -> None:
    settings = settings_for(bootstrap, "live")
    report.add(f"## 2. Live meta-48k into Kafka at 20x real time ({seconds:g} s wall)")
    report.add()
    try:
        c0 = cpu_s()
        request = SimulationRequest(
            mode="live", preset="meta-48k", duration_s=seconds, speed=20, sink="kafka"
        )
        result = run_simulation(settings, request)
        cpu = cpu_s() - c0
    finally:
        drop_topics(settings)
    samples = result.counts["HostSampled"]
    busy = result.elapsed_s - result.idle_s
    report.add("| metric | value |")
    report.add("|---|---:|")
    report.add(f"| HostSampled produced | {samples:,} in {result.ticks} ticks |")
    report.add(f"| achieved samples/s (paced) | {samples / result.elapsed_s:,.0f} |")
    report.add(f"| required at 20x for 6,144 hosts | {LIVE_REQUIRED:,.0f} |")
    report.add(f"| time busy / idle waiting for the clock | {busy:.1f} s / {result.idle_s:.1f} s |")
    report.add(
        f"| capacity (samples / busy s) | {samples / busy:,.0f} ({samples / busy / LIVE_REQUIRED:.2f}x the requirement) |"
    )
    report.add(f"| worst lag of a tick behind the wall clock | {result.max_lag_s:.2f} s |")
    report.add(
        f"| process CPU (generator + kafka-python I/O thread) | {cpu:.1f} s = {cpu / result.elapsed_s:.2f} cores |"
    )
    report.add(
        f"| samples per CPU second | {samples / cpu:,.0f} ({samples / cpu / LIVE_REQUIRED:.2f}x the requirement) |"
    )
    report.add()
    report.add(
        "Achieved is capped by the pacing and by the cohort arriving during the run (those hosts report only "
        "from their install time). The pacing kept up if the worst lag stays under one tick (0.5 s). On a "
        "contended machine the wall-clock figures fall with the CPU share this process gets; samples per CPU "
        "second is the capacity of one core."
    )
    report.add()


def bench_fast_forward(report: Report, bootstrap: str, days: float) -> None:
    settings = settings_for(bootstrap, "ff")
    report.add(f"## 3. meta-48k fast-forward, {days:g} days, into Kafka")
    report.add()
    try:
        c0, t0 = cpu_s(), time.perf_counter()
        result = run_simulation(settings, SimulationRequest(preset="meta-48k", days=days, sink="kafka"))
        wall, cpu = time.perf_counter() - t0, cpu_s() - c0
    finally:
        drop_topics(settings)
    report.add("| metric | value |")
    report.add("|---|---:|")
    report.add(
        f"| events | {result.total:,} ({', '.join(f'{k}: {v:,}' for k, v in result.counts_by_topic.items())}) |"
    )
    report.add(f"| sample interval | {result.interval_s} s |")
    report.add(
        f"| wall time (incl. schedules, flush) | {wall:.0f} s = {wall / 300:.2f} of the 5 min target |"
    )
    report.add(f"| events/s | {result.total / wall:,.0f} |")
    report.add(f"| sim time per wall second | {days * 86_400 / wall:,.0f}x real time |")
    report.add(
        f"| process CPU | {cpu:.0f} s = {cpu / wall:.2f} cores ({result.total / cpu:,.0f} events per CPU second) |"
    )
    report.add(
        f"| peak RSS of the bench process | {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB |"
    )
    report.add()


def _kafka_python(
    bootstrap: str, settings: Settings, topics: dict[str, str], records: list[tuple[str, bytes, bytes]]
) -> float:
    producer = KafkaProducer(**producer_config(settings, settings.simulator.producer, "bench-kafka-python"))
    try:
        producer.send(topics["samples"], key=b"warmup", value=b"").get(timeout=30)
        t0 = time.perf_counter()
        for family, key, value in records:
            producer.send(topics[family], key=key, value=value)
        producer.flush()
        return time.perf_counter() - t0
    finally:
        producer.close()


def _confluent(
    bootstrap: str, settings: Settings, topics: dict[str, str], records: list[tuple[str, bytes, bytes]]
) -> float:
    tuning = settings.simulator.producer
    producer = confluent_kafka.Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": "all",
            "enable.idempotence": True,
            "compression.type": producer_config(settings, tuning, "x")["compression_type"] or "none",
            "linger.ms": tuning.linger_ms,
            "batch.size": tuning.batch_size,
            "queue.buffering.max.kbytes": tuning.max_buffered_bytes // 1024,
            "delivery.timeout.ms": tuning.delivery_timeout_ms,
        }
    )
    failed = []

    def on_delivery(err: Any, msg: Any) -> None:
        if err is not None:
            failed.append(err)

    producer.produce(topics["samples"], key=b"warmup", value=b"", on_delivery=on_delivery)
    producer.flush(30)
    t0 = time.perf_counter()
    for family, key, value in records:
        while True:
            try:
                producer.produce(topics[family], key=key, value=value, on_delivery=on_delivery)
                break
            except BufferError:  # local queue full: serve delivery reports, then retry
                producer.poll(0.05)
        producer.poll(0)
    producer.flush(120)
    elapsed = time.perf_counter() - t0
    if failed:
        raise RuntimeError(f"confluent-kafka: {len(failed)} deliveries failed: {failed[0]}")
    return elapsed


def bench_producers(report: Report, bootstrap: str, count: int) -> None:
    report.add(f"## 4. kafka-python vs confluent-kafka, the same {count:,} pre-encoded meta-48k records")
    report.add()
    settings = settings_for(bootstrap, "cmp")
    capture = CaptureSink(count)
    run_simulation(
        settings,
        SimulationRequest(
            preset="meta-48k", days=(count // META_HOSTS + 2) * 10 / 86_400, interval_s=10, sink="null"
        ),
        sink=capture,
    )
    records = capture.records[:count]
    size = sum(len(v) for _, _, v in records)
    topics = {f: getattr(settings.topics, f).name for f in ("inventory", "samples", "errors")}
    admin.create_topics(
        settings, [settings.topics.inventory, settings.topics.samples, settings.topics.errors]
    )
    rows = []
    try:
        for name, fn in (("kafka-python", _kafka_python), ("confluent-kafka", _confluent)):
            if name == "confluent-kafka" and confluent_kafka is None:
                report.add(f"{name} is not installed: skipped.")
                continue
            c0 = cpu_s()
            wall = fn(bootstrap, settings, topics, records)
            rows.append((name, wall, cpu_s() - c0))
    finally:
        drop_topics(settings)
    report.add(
        f"Same settings for both: acks=all, idempotent, {producer_config(settings, settings.simulator.producer, 'x')['compression_type']} "
        f"compression, linger {settings.simulator.producer.linger_ms} ms, batch {settings.simulator.producer.batch_size // 1024} KiB; "
        f"{size / len(records):.0f} bytes/record on average; time from first send to flush complete."
    )
    report.add()
    report.add("| client | wall s | records/s | MB/s | CPU s (this process) |")
    report.add("|---|---:|---:|---:|---:|")
    for name, wall, cpu in rows:
        report.add(
            f"| {name} | {wall:.2f} | {len(records) / wall:,.0f} | {size / wall / 1e6:.1f} | {cpu:.2f} |"
        )
    if len(rows) == 2:
        report.add()
        report.add(
            f"confluent-kafka / kafka-python throughput: **{rows[0][1] / rows[1][1]:.1f}x**; "
            f"CPU per record: {rows[0][2] / max(rows[1][2], 1e-9):.1f}x less with confluent-kafka "
            "(librdkafka's own threads also count here)."
        )
    report.add()


def main() -> None:
    exit_on_sigterm()
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="smaller sizes (about a minute)")
    parser.add_argument("--gen-ticks", type=int, default=60)
    parser.add_argument("--gen-days", type=float, default=30)
    parser.add_argument("--live-seconds", type=float, default=60)
    parser.add_argument("--ff-days", type=float, default=90)
    parser.add_argument("--compare-records", type=int, default=200_000)
    parser.add_argument("--md", type=Path, help="write the report (Markdown) here")
    args = parser.parse_args()
    if args.quick:
        args.gen_ticks, args.gen_days, args.live_seconds, args.ff_days, args.compare_records = (
            10,
            5,
            15,
            5,
            50_000,
        )

    report = Report()
    command = ".venv/bin/python bench/bench_simulator.py " + " ".join(sys.argv[1:])
    if confluent_kafka is None:
        confluent_version = "not installed"
    else:
        found = confluent_kafka.version()
        confluent_version = found if isinstance(found, str) else found[0]

    report.add("# Simulator benchmark")
    report.add()
    report.add(f"Command: `{command.strip()}`  ")
    report.add(
        f"Machine: {os.cpu_count()} cores (shared with other engineers' work: load average at start "
        f"{os.getloadavg()[0]:.1f}), Python {platform.python_version()}, kafka-python {kafka.__version__}, "
        f"confluent-kafka {confluent_version}."
    )
    report.add()
    settings = Settings.load()
    bench_generation(report, settings, args.gen_ticks, args.gen_days)
    with kafka_cluster() as (bootstrap, kind):
        report.add(f"Kafka: {kind}.")
        report.add()
        bench_live(report, bootstrap, args.live_seconds)
        bench_fast_forward(report, bootstrap, args.ff_days)
        bench_producers(report, bootstrap, args.compare_records)
    report.add(f"Load average at the end: {os.getloadavg()[0]:.1f}.")
    if args.md:
        args.md.parent.mkdir(parents=True, exist_ok=True)
        args.md.write_text("\n".join(report.lines) + "\n")


if __name__ == "__main__":
    main()
