"""Benchmark archivers sharing the partitions (not a test): records/s of 1 and of N ``fleetpulse archive`` members.

    nice -n 10 .venv/bin/python bench/bench_archiver_members.py --records 600000 --members 2 --rounds 2

Starts a LocalBroker on free ports, fills the archived topics (real partition counts, a random prefix) with
the synthetic fleet mix once, then alternates runs of 1 and of --members archiver processes (``fleetpulse
archive --until-idle --member I/N``), each run on a fresh lake and consumer group, so every run reads the
same backlog. A run's rate is its records over the wall time from the start of its processes to the exit of
the last one (the process start-up, a few seconds of imports, is in it). Also printed: the CPU seconds of
each run's processes (``wait4`` rusage) and the broker's, and the rows every run's lake holds, which must
equal the backlog (each record once). Runs alternate so the machine's load drifts over both alike.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import polars as pl  # noqa: E402
from archiver_feed import fill, settings_on  # noqa: E402
from benchkit import exit_on_sigterm  # noqa: E402
from soak_probe import cpu_s  # noqa: E402

from analytics.lake import Lake  # noqa: E402
from fleetpulse.broker import LocalBroker  # noqa: E402
from fleetpulse.supervisor import free_ports  # noqa: E402
from ground.kafka import admin  # noqa: E402
from ground.launch import child_env, fleetpulse_argv, launch  # noqa: E402
from ground.settings import Settings  # noqa: E402


def lake_rows(path: Path) -> int:
    lake = Lake(str(path))
    return sum(lake.scan(name).select(pl.len()).collect().item() for name in lake.tables())


def run(settings: Settings, members: int, work: Path, broker_pid: int | None) -> dict[str, float]:
    """``members`` archiver processes over the whole backlog, until each is idle."""
    lake_dir = work / f"lake-{uuid.uuid4().hex[:6]}"
    lake = settings.lake.model_copy(
        update={"path": str(lake_dir), "group_id": f"bench-members-{lake_dir.name}"}
    )
    env = child_env(settings.model_copy(update={"lake": lake}))
    broker_cpu0 = cpu_s(broker_pid) if broker_pid else 0.0
    started = time.perf_counter()
    procs = []
    for i in range(members):
        argv = fleetpulse_argv("archive", "--until-idle", "--member", f"{i}/{members}")
        procs.append(launch(argv, env, log_path=work / f"{lake_dir.name}-member{i}.log"))
    cpu = 0.0
    for proc, log in procs:
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if log is not None:
            log.close()
        if proc.returncode != 0:
            raise SystemExit(
                f"an archiver exited with {proc.returncode}: see {work}/{lake_dir.name}-member*.log"
            )
        cpu += usage.ru_utime + usage.ru_stime
    wall = time.perf_counter() - started
    rows = lake_rows(lake_dir)
    shutil.rmtree(lake_dir, ignore_errors=True)
    broker_cpu = (cpu_s(broker_pid) - broker_cpu0) if broker_pid else float("nan")
    return {
        "members": members,
        "wall_s": wall,
        "rate": rows / wall,
        "cpu_s": cpu,
        "broker_cpu_s": broker_cpu,
        "rows": rows,
    }


def main() -> None:
    exit_on_sigterm()
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--records", type=int, default=600_000, help="backlog size (the fleet mix, ~99%% HostSampled)"
    )
    p.add_argument("--members", type=int, default=2, help="archivers of the shared run")
    p.add_argument("--rounds", type=int, default=2, help="pairs of runs (1 member, then --members)")
    args = p.parse_args()
    print("command: python bench/bench_archiver_members.py " + " ".join(sys.argv[1:]))
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    base = Settings.load()
    work = Path(tempfile.mkdtemp(prefix="bench-members-"))
    port, controller = free_ports(2)
    broker = LocalBroker(
        base.broker.model_copy(
            update={"port": port, "controller_port": controller, "data_dir": work / "kafka"}
        )
    )
    broker.start()
    try:
        settings = settings_on(base, broker.bootstrap_servers, f"bench{uuid.uuid4().hex[:6]}.")
        topics = settings.topics
        admin.create_topics(settings)
        produced = fill(settings, args.records)
        print(f"backlog: {produced:,} records on {sum(s.partitions for s in topics.all())} partitions")
        results: dict[int, list[dict[str, float]]] = {1: [], args.members: []}
        for _ in range(args.rounds):
            for n in (1, args.members):
                r = run(settings, n, work, broker.pid())
                results[n].append(r)
                print(
                    f"  {n} member(s): {r['rows']:,} rows in {r['wall_s']:.1f} s = {r['rate']:,.0f} records/s; "
                    f"archiver CPU {r['cpu_s']:.1f} s, broker CPU {r['broker_cpu_s']:.1f} s; "
                    f"load {os.getloadavg()[0]:.2f}",
                    flush=True,
                )
                if r["rows"] != produced:
                    raise SystemExit(f"the lake holds {r['rows']:,} rows, the backlog {produced:,}")
        one = sorted(r["rate"] for r in results[1])
        many = sorted(r["rate"] for r in results[args.members])
        ratios = [
            m / o
            for o, m in zip(
                (r["rate"] for r in results[1]), (r["rate"] for r in results[args.members]), strict=True
            )
        ]
        print(
            f"1 member: {', '.join(f'{x:,.0f}' for x in one)} records/s; {args.members} members: "
            f"{', '.join(f'{x:,.0f}' for x in many)} records/s"
        )
        print(f"ratio {args.members} members / 1 member, per round: {', '.join(f'{x:.2f}' for x in ratios)}")
        admin.delete_topics(settings, [s.name for s in topics.all()])
    finally:
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
