"""Benchmark ``fleetpulse import`` into Kafka (not a test) against the simulator's producer in the same run.

Writes a synthetic fault trace (event-shaped CSV, like public traces: node, day, start/end,
three-level fault type), then measures on one broker, one after the other:

1. the simulator's Kafka sink alone pushing the import's own pre-built records (the ceiling);
2. the simulator itself, fast-forward into Kafka (its events per second);
3. ``fleetpulse import`` end to end: read the fleet, parse, map, pair, send, every ack awaited, once
   through the sink's per-record ``send`` (the path before the bulk one) and once as it runs now
   (whole record batches, ``producers.sinks.kafka_batches``), each into fresh topics;
4. a second import of the same file (sends nothing: reading what Kafka holds is the cost).

``--sim-days 0`` leaves the simulator out.

    .venv/bin/python bench/bench_import.py --incidents 200000 --md docs/benchmarks/import-run.md
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_simulator import Report, cpu_s, kafka_cluster  # noqa: E402

from ground.kafka import admin  # noqa: E402
from ground.settings import Settings  # noqa: E402
from producers.batches import RecordBatch  # noqa: E402
from producers.importer import load_mapping, plan_import, run_import  # noqa: E402
from producers.importer.incidents import parse_start  # noqa: E402
from producers.importer.mapping import EXAMPLE_MAPPING  # noqa: E402
from producers.runner import SimulationRequest, run_simulation  # noqa: E402
from producers.sinks.kafka import KafkaSink  # noqa: E402

GOAL = 20_000  # incidents/s into Kafka
FAULTS = [
    "GPU/DBE/over threshold",
    "GPU/lost/-",
    "Network/link down/port 1",
    "Network/NIC lost/-",
    "PCIe/width low/x8",
    "Power/PSU/failed",
    "Fan/failed/3",
    "Misc/unknown error/-",
    "Stress test/failed/nccl",
]


def write_trace(path: Path, incidents: int, nodes: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    lines = ["node_id,time,event,fault_type"]
    for _ in range(incidents):
        node, kind = rng.randrange(1, nodes + 1), rng.choice(FAULTS)
        start = rng.uniform(0, 348)
        lines.append(f"{node},{start:.6f},start,{kind}")
        lines.append(f"{node},{start + rng.expovariate(2.0):.6f},end,{kind}")
    path.write_text("\n".join(lines) + "\n")


def settings_for(bootstrap: str) -> Settings:
    tag = uuid.uuid4().hex[:6]
    topics = {
        f: {"name": f"bench.import.{tag}.{f}", "partitions": 6}
        for f in ("inventory", "samples", "errors", "actions")
    }
    return Settings.load(kafka={"bootstrap_servers": bootstrap}, topics=topics)


def timed(fn):  # type: ignore[no-untyped-def]
    c0, t0 = cpu_s(), time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0, cpu_s() - c0


def row(report: Report, label: str, n: int, wall: float, cpu: float, base: float | None) -> None:
    ratio = f"{n / cpu / base:.2f}" if base else ""
    report.add(f"| {label} | {n:,} | {wall:.2f} | {cpu:.2f} | {n / wall:,.0f} | {n / cpu:,.0f} | {ratio} |")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--incidents", type=int, default=200_000)
    parser.add_argument("--nodes", type=int, default=400)
    parser.add_argument("--sim-days", type=float, default=30, help="fast-forward days of the small preset")
    parser.add_argument("--md", type=Path, help="write the report (Markdown) here")
    args = parser.parse_args()
    report = Report()
    report.add(f"# fleetpulse import benchmark\n\nCommand: `{' '.join(sys.argv)}`  ")
    report.add(
        f"Machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}\n"
    )
    mapping = load_mapping(EXAMPLE_MAPPING)
    start = parse_start("2024-01-01")
    with tempfile.TemporaryDirectory() as tmp, kafka_cluster() as (bootstrap, where):
        report.add(f"Broker: {where}\n")
        trace = Path(tmp) / "trace.csv"
        write_trace(trace, args.incidents, args.nodes)
        plan, wall, cpu = timed(lambda: plan_import(trace, mapping, start_ms=start))
        n = len(plan.records)
        report.add(
            "| step | records | wall s | CPU s | records/s wall | records per CPU s | per CPU s vs sink alone |"
        )
        report.add("|---|---:|---:|---:|---:|---:|---:|")
        size = trace.stat().st_size / 1e6
        row(report, f"parse, map and pair only ({size:.1f} MB CSV)", n, wall, cpu, None)

        ceiling_settings = settings_for(bootstrap)
        admin.create_topics(ceiling_settings)

        def sink_alone() -> None:
            sink = KafkaSink(ceiling_settings, client_id="bench-sink")
            for i in range(0, n, 10_000):
                sink.write(RecordBatch(plan.records[i : i + 10_000]))
            sink.close()

        _, s_wall, s_cpu = timed(sink_alone)
        base = n / s_cpu
        row(report, "simulator's Kafka sink alone, same records", n, s_wall, s_cpu, base)

        sim_settings = settings_for(bootstrap)
        sim_rate = None
        if args.sim_days > 0:
            admin.create_topics(sim_settings)
            request = SimulationRequest(preset="small", days=args.sim_days, sink="kafka")
            result, m_wall, m_cpu = timed(lambda: run_simulation(sim_settings, request))
            label = f"simulator, small preset, {args.sim_days:g} days fast-forward into Kafka"
            row(report, label, result.total, m_wall, m_cpu, base)
            sim_rate = result.total / m_cpu

        old_settings = settings_for(bootstrap)
        admin.create_topics(old_settings)

        def per_record(s: Settings) -> KafkaSink:
            return KafkaSink(s, client_id="bench-import-per-record", bulk=False)

        old, o_wall, o_cpu = timed(
            lambda: run_import(old_settings, trace, mapping, start_ms=start, sink_factory=per_record)
        )
        row(
            report,
            "`fleetpulse import` end to end, per-record send (the old path)",
            old.sent,
            o_wall,
            o_cpu,
            base,
        )
        old_rate = old.sent / o_cpu

        imp_settings = settings_for(bootstrap)
        admin.create_topics(imp_settings)
        summary, i_wall, i_cpu = timed(lambda: run_import(imp_settings, trace, mapping, start_ms=start))
        row(report, "`fleetpulse import` end to end, whole batches (now)", summary.sent, i_wall, i_cpu, base)
        rate, wall_rate = summary.sent / i_cpu, summary.sent / i_wall
        assert summary.sent == old.sent and summary.hardware_sent == old.hardware_sent
        again, a_wall, a_cpu = timed(lambda: run_import(imp_settings, trace, mapping, start_ms=start))
        assert again.sent == 0 and again.already_imported == summary.sent
        row(report, "second import of the same file (sends nothing)", again.incidents, a_wall, a_cpu, base)
        report.add()
        versus_sim = f" and {rate / sim_rate:.2f}x the simulator's own events" if sim_rate else ""
        report.add(
            f"Import into Kafka: **{wall_rate:,.0f} incidents/s wall = {wall_rate / GOAL:.2f}x the {GOAL:,}/s goal; "
            f"{rate:,.0f} per CPU second = {rate / GOAL:.2f}x**; per CPU second {rate / old_rate:.2f}x the per-record "
            f"send ({old_rate:,.0f}), {rate / base:.2f}x the simulator's sink alone on the same records{versus_sim} "
            f"in this run; {summary.hardware_sent:,} hardware events sent with the incidents (not counted in the rates); "
            f"coverage {summary.coverage:.1%}. Load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores."
        )
        for s in (ceiling_settings, sim_settings, old_settings, imp_settings):
            names = [getattr(s.topics, f).name for f in ("inventory", "samples", "errors", "actions")]
            try:
                admin.delete_topics(s, names)
            except Exception as exc:  # noqa: BLE001 (a leftover topic is harmless in a throwaway broker)
                report.add(f"(could not delete topics: {exc})")
    if args.md:
        args.md.write_text("\n".join(report.lines) + "\n")


if __name__ == "__main__":
    main()
