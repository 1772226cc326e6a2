"""Benchmark ``fleetpulse backtest`` against replaying the same history through Kafka and a detect worker.

    python bench/bench_backtest.py [--bootstrap HOST:PORT] [--preset meta-48k] [--days 30] [--seed 1]
                                   [--md docs/benchmarks/backtest-run.md]

Simulates a fleet into a Parquet lake (not timed), then, in the same run: (1) the backtest reads the
lake and replays it through the packaged policy, in this process; (2) the same records (inventory,
samples, errors, incidents and operators' steps, as read from the lake) are produced to topics of
their own and consumed by a real ``fleetpulse detect`` subprocess until every stage is idle. Wall time
and CPU time of both sides are printed (the machine is shared: CPU time is the steadier figure), and
the finding ids of both are compared. Without --bootstrap a private broker is started on free ports.
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
from ground.settings import Settings
from schemas import Codec
from schemas.events import topic_family
from streams.core.policy import load_policy
from streams.worker import spawn_worker


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


def time_backtest(lake: Path) -> tuple[float, float, int, dict[str, str]]:
    """(wall s, CPU s, records replayed, finding id -> detector) of reading the lake and replaying the packaged policy."""
    t, c = time.perf_counter(), cpu_s()
    history = read_history(Lake(lake), Period())
    result = replay(history, load_policy())
    return (
        time.perf_counter() - t,
        cpu_s() - c,
        len(history.events),
        {f.finding_id: f.detector for f in result.findings},
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
    out = [(topic_family(r["event_type"]), r["host_id"].encode(), codec.encode(r)) for r in [*head, *stream]]
    return out, len(stream)


def time_kafka(
    settings: Settings, lake: Path, lines: list[str]
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
            done, t0, _ = consumed_window(worker, expected)
            idle = wait_idle(worker, quiet_s=3.0)
            worker_cpu = cpu_s(worker.pid) - ready_cpu
            say(lines, f"detect worker consumed {done:,.0f} of {expected:,} samples + errors")
        finally:
            worker.stop()
    found = findings_from_kafka(settings, timeout_s=120)
    admin.delete_topics(settings, [s.name for s in settings.topics.all()])
    return (
        produced,
        produced_cpu,
        idle - (t0 or idle),
        worker_cpu,
        dict(found.select("finding_id", "detector").rows()),
    )


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
        wall, cpu, n, ours = time_backtest(lake)
        say(
            lines,
            f"backtest: {n:,} samples + errors of {args.preset}, {args.days:g} days, read and replayed in "
            f"{wall:.1f} s ({cpu:.1f} CPU s), {len(ours)} findings, peak RSS {peak_rss_mib():,.0f} MiB",
        )
        with broker(args.bootstrap, base, Path(tmp) / "broker") as bootstrap:
            settings = isolated(base, bootstrap)
            p_wall, p_cpu, w_wall, w_cpu, theirs = time_kafka(settings, lake, lines)
    say(
        lines,
        f"detect worker: first record consumed to every stage idle {w_wall:.1f} s ({w_cpu:.1f} CPU s), "
        f"{len(theirs)} findings",
    )
    only_ours = Counter(d for f, d in ours.items() if f not in theirs)
    only_theirs = Counter(d for f, d in theirs.items() if f not in ours)
    say(
        lines,
        f"findings: {len(ours.keys() & theirs.keys())} the same id, {only_ours.total()} backtest only "
        f"{dict(sorted(only_ours.items()))}, {only_theirs.total()} worker only "
        f"{dict(sorted(only_theirs.items()))}",
    )
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
