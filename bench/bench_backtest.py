"""Benchmark ``fleetpulse backtest`` against replaying the same history through Kafka and a detect worker.

    python bench/bench_backtest.py [--bootstrap HOST:PORT] [--preset meta-48k] [--days 30] [--seed 1]
                                   [--md docs/benchmarks/backtest-run.md]

Simulates a fleet into a Parquet lake (not timed), then, in the same run: (1) the backtest reads the
lake and replays it through the packaged policy, in this process; (2) the same records (inventory,
samples, errors, incidents and operators' steps, as read from the lake) are produced to topics of
their own and consumed by a real ``fleetpulse detect`` subprocess until it is drained: every samples
partition declared idle (the end of the history closes the windows it left open only then, one
``idle_partition_timeout`` of wall time after the partition was caught up, as the backtest's end
closes them), every consumer group committed up to the end of every topic, and every stage quiet.
Wall time and CPU time of both sides are printed (the machine is shared: CPU time is the steadier
figure), and the finding ids of both are compared: once when the stages first go quiet after the
last record is consumed (what an earlier version of this bench compared), and once drained. Without
--bootstrap a private broker is started on free ports.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from bench_detect import consumed_window, free_port, isolated, produce, wait_idle
from benchkit import exit_on_sigterm

from analytics.lake import Lake
from fleetpulse.backtest.events import (
    INVENTORY_TABLE,
    OUTAGE_TABLES,
    REPLAYED_TABLES,
    Period,
    read_history,
    read_tables,
)
from fleetpulse.backtest.replay import replay
from fleetpulse.broker.process import LocalBroker
from fleetpulse.evaluation.sources import findings_from_kafka
from fleetpulse.supervisor import free_ports
from ground.kafka import admin
from ground.kafka.reading import group_lags
from ground.settings import Settings
from schemas import Codec
from schemas.events import topic_family
from streams.core.policy import load_policy
from streams.topology import consumer_groups
from streams.worker import WorkerProcess, spawn_worker


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default=None, help="a running broker (default: start a private one)")
    parser.add_argument("--preset", default="meta-48k")
    parser.add_argument("--days", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--md", type=Path, help="also write the run's output here (Markdown)")
    return parser.parse_args()


def say(lines: list[str], text: str) -> None:
    print(text, flush=True)
    lines.append(text)


def simulate(preset: str, days: float, seed: int, lake: Path) -> None:
    cmd = [sys.executable, "-m", "fleetpulse", "simulate", "--preset", preset, "--days", str(days)]
    cmd += ["--seed", str(seed), "--sink", "parquet", "--out", str(lake), "--no-progress"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def cpu_s(pid: int | None = None) -> float:
    """CPU seconds (user + system) of this process, or of another one from /proc."""
    if pid is None:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def time_backtest(lake: Path) -> tuple[float, float, int, dict[str, str], dict[str, int]]:
    """(wall s, CPU s, records replayed, finding id -> detector, stage -> records too late) of reading the lake
    and replaying the packaged policy."""
    t, c = time.perf_counter(), cpu_s()
    history = read_history(Lake(lake), Period())
    result = replay(history, load_policy())
    return (
        time.perf_counter() - t,
        cpu_s() - c,
        len(history.events),
        {f.finding_id: f.detector for f in result.findings},
        result.late,
    )


def peak_rss_mib() -> float:
    """This process's peak resident memory so far (the backtest runs before the Kafka side reads anything)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@contextlib.contextmanager
def broker(bootstrap: str | None, base: Settings, data_dir: Path) -> Iterator[str]:
    if bootstrap:
        yield bootstrap
        return
    port, controller = free_ports(2)
    own = LocalBroker(
        base.broker.model_copy(update={"port": port, "controller_port": controller, "data_dir": data_dir})
    )
    own.start()
    try:
        yield own.bootstrap_servers
    finally:
        own.stop()


def kafka_records(lake: Path) -> tuple[list[tuple[str, bytes, bytes]], int]:
    """The lake's history as (topic family, key, Avro value), inventory first; and how many are samples + errors."""
    codec, period = Codec(), Period()
    head = read_tables(Lake(lake), (INVENTORY_TABLE, *OUTAGE_TABLES), period)
    stream = read_tables(Lake(lake), REPLAYED_TABLES, period)
    out: list[tuple[str, bytes, bytes]] = [
        (topic_family(r["event_type"]), r["host_id"].encode(), codec.encode(r)) for r in [*head, *stream]
    ]
    return out, len(stream)


def drained(worker: WorkerProcess, settings: Settings) -> bool:
    """Every samples partition the worker owns declared idle, every group committed up to every topic's end."""
    health = worker.get_json("/health")
    samples = {a for a in health["assigned"] if a.startswith(f"{settings.topics.samples.name}[")}
    if not samples or not samples <= set(health["idle"]):
        return False
    return all(
        lag == 0
        for group, topics in consumer_groups(settings).items()
        for lag in group_lags(settings.bootstrap_servers, settings.kafka, group, topics).values()
    )


def wait_drained(
    worker: WorkerProcess, settings: Settings, quiet_s: float, timeout_s: float = 600.0
) -> float:
    """Block until ``drained``, then until the stages are quiet again; returns when they last worked."""
    deadline = time.perf_counter() + timeout_s
    while not drained(worker, settings):
        if time.perf_counter() > deadline:
            raise SystemExit(
                f"the detect worker did not drain within {timeout_s:.0f} s: {worker.get('/health')!r}"
            )
        time.sleep(1.0)
    return wait_idle(worker, quiet_s=quiet_s)


def compare(lines: list[str], when: str, ours: dict[str, str], theirs: dict[str, str]) -> None:
    only_ours = Counter(d for f, d in ours.items() if f not in theirs)
    only_theirs = Counter(d for f, d in theirs.items() if f not in ours)
    say(
        lines,
        f"findings {when}: {len(ours.keys() & theirs.keys())} the same id, {only_ours.total()} backtest only "
        f"{dict(sorted(only_ours.items()))}, {only_theirs.total()} worker only "
        f"{dict(sorted(only_theirs.items()))}",
    )


def late_events(worker: WorkerProcess) -> dict[str, float]:
    """Stage -> events the worker dropped as too late (its /metrics)."""
    out: dict[str, float] = {}
    for line in worker.get("/metrics").decode().splitlines():
        if line.startswith("fleetpulse_detect_late_events_total{"):
            stage = line.split('stage="', 1)[1].split('"', 1)[0]
            out[stage] = float(line.rsplit(" ", 1)[1])
    return out


def worker_findings(settings: Settings) -> dict[str, str]:
    return dict(findings_from_kafka(settings, timeout_s=120).select("finding_id", "detector").rows())


def time_kafka(
    settings: Settings, lake: Path, lines: list[str], ours: dict[str, str]
) -> tuple[float, float, float, float, dict[str, str]]:
    """(produce wall s, produce CPU s, worker wall s, worker CPU s, finding id -> detector) of the Kafka replay."""
    records, expected = kafka_records(lake)
    admin.create_topics(settings)
    t, c = time.perf_counter(), cpu_s()
    produce(settings, records)
    produced, produced_cpu = time.perf_counter() - t, cpu_s() - c
    say(
        lines,
        f"produced {len(records):,} records in {produced:.1f} s ({produced_cpu:.1f} CPU s, encoding included)",
    )
    with tempfile.TemporaryDirectory() as tmp:
        worker = spawn_worker(
            settings, web_port=free_port(), data_dir=Path(tmp) / "w", log_path=Path(tmp) / "w.log"
        )
        try:
            worker.wait_ready(120)
            ready_cpu = cpu_s(worker.pid)
            seen = consumed_window(worker, expected)
            done, t0, t1 = seen.events, seen.first, seen.last
            quiet = wait_idle(worker, quiet_s=3.0)
            say(lines, f"detect worker consumed {done:,.0f} of {expected:,} samples + errors")
            compare(
                lines,
                f"at the first quiet stages ({quiet - (t1 or quiet):.1f} s after the last record consumed)",
                ours,
                worker_findings(settings),
            )
            idle = wait_drained(worker, settings, quiet_s=3.0)
            worker_cpu = cpu_s(worker.pid) - ready_cpu
            say(
                lines,
                f"detect worker drained {idle - (t1 or idle):.1f} s after the last record consumed; "
                f"dropped as late: {late_events(worker)}",
            )
        finally:
            worker.stop()
    found = worker_findings(settings)
    admin.delete_topics(settings, [s.name for s in settings.topics.all()])
    return produced, produced_cpu, quiet - (t0 or quiet), worker_cpu, found


def main() -> None:
    exit_on_sigterm()
    args = parse_args()
    lines: list[str] = []
    command = "python bench/bench_backtest.py " + " ".join(sys.argv[1:])
    load_start = os.getloadavg()[0]
    base = Settings.load()
    with tempfile.TemporaryDirectory() as tmp:
        lake = Path(tmp) / "lake"
        simulate(args.preset, args.days, args.seed, lake)
        wall, cpu, n, ours, late = time_backtest(lake)
        say(
            lines,
            f"backtest: {n:,} samples + errors of {args.preset}, {args.days:g} days, read and replayed in "
            f"{wall:.1f} s ({cpu:.1f} CPU s), {len(ours)} findings, dropped as late: {late}, "
            f"peak RSS {peak_rss_mib():,.0f} MiB",
        )
        with broker(args.bootstrap, base, Path(tmp) / "broker") as bootstrap:
            settings = isolated(base, bootstrap)
            p_wall, p_cpu, w_wall, w_cpu, theirs = time_kafka(settings, lake, lines, ours)
    say(
        lines,
        f"detect worker: first record consumed to the first quiet stages {w_wall:.1f} s, "
        f"{w_cpu:.1f} CPU s until drained, "
        f"{len(theirs)} findings",
    )
    compare(lines, "drained", ours, theirs)
    say(lines, f"backtest vs worker alone: {w_wall / wall:.2f}x wall, {w_cpu / cpu:.2f}x CPU")
    say(
        lines,
        f"backtest vs produce + worker: {(p_wall + w_wall) / wall:.2f}x wall, "
        f"{(p_cpu + w_cpu) / cpu:.2f}x CPU",
    )
    if args.md:
        head = [
            "# Backtest benchmark run (generated by bench/bench_backtest.py)",
            "",
            f"Command: `{command}`  ",
            f"Machine: {os.cpu_count()} cores, load average {load_start:.1f} at the start and "
            f"{os.getloadavg()[0]:.1f} at the end; Python {platform.python_version()}.",
            "",
            "```",
        ]
        args.md.parent.mkdir(parents=True, exist_ok=True)
        args.md.write_text("\n".join([*head, *lines, "```", ""]))


if __name__ == "__main__":
    main()
