"""Benchmark detect scale-out (not a test): events/s of 1 and of N ``fleetpulse detect`` processes on the same topics.

    nice -n 10 .venv/bin/python bench/bench_scale_out.py --bootstrap 127.0.0.1:29392 --hosts 960 --workers 2

Uses the broker at --bootstrap (default: the settings' broker, which must be running) on topics of its
own. The simulator's records (samples and errors of --hosts hosts over --minutes) are produced once;
each run then reads that backlog from the start as a fresh set of consumer groups (its own app id), with
1 worker first and then --workers. The rate is taken between the moments the run's workers together
have consumed 20 % and 80 % of the backlog, so the start (the first assignment, and the rebalance when
a second member joins) stays out of it. Also printed: each run's CPU seconds per 1,000 events, summed
over its workers (``/proc/PID/stat``), and the broker's share when its pid is given (--broker-pid).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_detect import events_total, free_port, isolated, produce  # noqa: E402
from benchkit import exit_on_sigterm  # noqa: E402
from soak_probe import cpu_s  # noqa: E402

from ground.kafka import admin  # noqa: E402
from ground.settings import Settings  # noqa: E402
from streams.testing import Scenario  # noqa: E402
from streams.worker import WorkerProcess, spawn_worker  # noqa: E402


def consumed(workers: list[WorkerProcess]) -> float:
    return sum(events_total(w.get("/metrics").decode()) for w in workers)


def run(settings: Settings, n: int, expected: int, work: Path, broker_pid: int | None) -> dict[str, float]:
    """Start ``n`` workers of one fresh app id on the backlog; the 20-80 % rate and the CPU it took."""
    tag = uuid.uuid4().hex[:6]
    detect = settings.detect.model_copy(update={"app_id": f"{settings.detect.app_id}-{n}w-{tag}"})
    run_settings = settings.model_copy(update={"detect": detect})
    workers = [
        spawn_worker(
            run_settings, web_port=free_port(), data_dir=work / f"{tag}-{i}", log_path=work / f"{tag}-{i}.log"
        )
        for i in range(n)
    ]
    try:
        for w in workers:
            w.wait_ready(120)
        marks: dict[float, tuple[float, float, float]] = {}  # share -> (time, workers' CPU, broker's CPU)
        deadline = time.time() + 900
        done = 0.0
        while done < expected and time.time() < deadline:
            done = consumed(workers)
            for share in (0.2, 0.8):
                if share not in marks and done >= share * expected:
                    broker = cpu_s(broker_pid) if broker_pid else 0.0
                    marks[share] = (time.perf_counter(), sum(cpu_s(w.pid) for w in workers), broker)
            time.sleep(0.05)
        if len(marks) < 2:
            raise SystemExit(f"{n} worker(s) consumed only {done:.0f} of {expected} events")
        (t0, c0, b0), (t1, c1, b1) = marks[0.2], marks[0.8]
        events = 0.6 * expected
        return {
            "rate": events / (t1 - t0),
            "cpu_per_k": 1000 * (c1 - c0) / events,
            "broker_per_k": 1000 * (b1 - b0) / events,
        }
    finally:
        for w in workers:
            w.stop()


def main() -> None:
    exit_on_sigterm()
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bootstrap", default=None)
    p.add_argument("--hosts", type=int, default=960)
    p.add_argument("--minutes", type=int, default=60)
    p.add_argument("--interval", type=int, default=10)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--rounds", type=int, default=1, help="repeat the 1-worker and N-worker pair")
    p.add_argument("--broker-pid", type=int, help="the broker JVM's pid, to report its CPU per 1,000 events")
    args = p.parse_args()
    print("command: python bench/bench_scale_out.py " + " ".join(sys.argv[1:]))
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    base = Settings.load()
    settings = isolated(base, args.bootstrap or base.bootstrap_servers)
    scenario = Scenario(hosts=args.hosts, interval_s=args.interval, duration_min=args.minutes)
    records = list(scenario.records())
    expected = sum(1 for r in records if r[0] in ("samples", "errors"))
    admin.create_topics(settings)
    t = time.perf_counter()
    produce(settings, records)
    print(
        f"backlog: {expected} events on samples+errors ({args.hosts} hosts, {args.minutes} min) in {time.perf_counter() - t:.0f} s"
    )
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(args.rounds):
                one = run(settings, 1, expected, Path(tmp), args.broker_pid)
                many = run(settings, args.workers, expected, Path(tmp), args.broker_pid)
                for n, result in ((1, one), (args.workers, many)):
                    print(
                        f"round {r + 1}, {n} worker(s): {result['rate']:,.0f} events/s between 20 % and 80 % of the "
                        f"backlog; workers' CPU {result['cpu_per_k']:.3f} s per 1,000 events"
                        + (f", broker's {result['broker_per_k']:.3f} s" if args.broker_pid else "")
                    )
                print(
                    f"round {r + 1}: {args.workers} workers / 1 worker = {many['rate'] / one['rate']:.2f}x "
                    f"(goal >= {0.8 * args.workers:.1f}x with a core per worker)",
                    flush=True,
                )
    finally:
        admin.delete_topics(settings, [s.name for s in settings.topics.all()])


if __name__ == "__main__":
    main()
