"""Soak the whole pipeline (not a test): a live fleet at N× real time through broker, detectors, archiver,
dispatcher and receiver for an hour, sampling every part's memory and open files and every group's lag.

    .venv/bin/python bench/soak.py --minutes 60 --json out/soak.json --md docs/benchmarks/soak-run.md
    .venv/bin/python bench/soak.py --minutes 20 --preset demo --speed 10     # a lighter load
    .venv/bin/python bench/soak.py --minutes 30 --archiver-b-env _RJEM_MALLOC_CONF=muzzy_decay_ms:0

The parts are started exactly as ``fleetpulse demo`` starts them (``fleetpulse.demo_parts``), against a local
broker of the run's own on free ports, with no history: the live simulator's fleet starts fresh. The verdict's
rules are in ``soak_verdict.RULES``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import os
import platform
import shlex
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchkit import exit_on_sigterm  # noqa: E402
from soak_probe import lag_probe, part_usage  # noqa: E402
from soak_verdict import judge, markdown, minute_table  # noqa: E402

from analytics.lake.archiver import archived_topics  # noqa: E402
from fleetpulse.broker import LocalBroker, ensure_running, stop_if_started_within  # noqa: E402
from fleetpulse.demo_parts import live_simulator_argv, start_parts  # noqa: E402
from fleetpulse.demo_run import DemoPlan, run_settings  # noqa: E402
from fleetpulse.supervisor import Part, Supervisor, free_ports  # noqa: E402
from ground.kafka.admin import ensure_topics  # noqa: E402
from ground.launch import child_env, fleetpulse_argv, settings_env  # noqa: E402
from ground.settings import Settings  # noqa: E402
from streams.topology import consumer_groups  # noqa: E402


def env_pair(text: str) -> tuple[str, str]:
    name, eq, value = text.partition("=")
    if not name or not eq:
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=VALUE")
    return name, value


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--preset", default="meta-48k")
    parser.add_argument("--speed", type=float, default=10.0, help="sim seconds per wall second")
    parser.add_argument("--workers", type=int, default=1, help="detect worker processes")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--every-s", type=float, default=60.0, help="sampling interval")
    parser.add_argument("--out", type=Path, default=Path("out"), help="run folder parent (logs stay there)")
    parser.add_argument("--keep", action="store_true", help="keep the run's broker data and lake")
    parser.add_argument(
        "--archiver-b-env",
        nargs="*",
        default=[],
        metavar="NAME=VALUE",
        type=env_pair,
        help="also run a second archiver (its own group and lake) with these variables: a same-run "
        "comparison, e.g. of allocator settings",
    )
    parser.add_argument("--json", type=Path, help="write every sample and the verdict here")
    parser.add_argument("--md", type=Path, help="write the summary (Markdown) here")
    return parser.parse_args()


def plan_for(args: argparse.Namespace) -> DemoPlan:
    run_id = time.strftime("soak-%Y%m%d-%H%M%S")
    ports = free_ports(1 + args.workers)
    return DemoPlan(
        run_id=run_id,
        run_dir=(args.out / run_id).resolve(),
        preset=args.preset,
        history_days=0.0,
        live_seconds=args.minutes * 60 + 3 * args.every_s,
        speed=args.speed,
        seed=args.seed,
        workers=args.workers,
        receiver_port=ports[0],
        web_ports=ports[1:],
        closed_loop=False,  # the soak measures the pipeline under the simulator's load, as before
    )


def own_broker(settings: Settings, plan: DemoPlan) -> Settings:
    """A local broker of this run's own (free ports, data in the run folder), unless an external one is set."""
    if not settings.uses_local_broker:
        return settings
    port, controller = free_ports(2)
    return settings.with_section(
        "broker", port=port, controller_port=controller, data_dir=plan.run_dir / "broker"
    )


def groups_of(settings: Settings) -> dict[str, list[str]]:
    """Every consumer group of the pipeline and the topics it commits on."""
    groups = consumer_groups(settings)
    groups[settings.lake.group_id] = list(archived_topics(settings))
    groups[settings.webhooks.group_id] = [settings.topics.alerts.name]
    return groups


def sample(
    t_min: float, parts: dict[str, int], settings: Settings, groups: dict[str, list[str]]
) -> dict[str, Any]:
    return {
        "t_min": round(t_min, 2),
        "utc": f"{dt.datetime.now(dt.UTC):%Y-%m-%dT%H:%M:%SZ}",
        "load": list(os.getloadavg()),
        "parts": {name: part_usage(pid) for name, pid in parts.items()},
        "lags": lag_probe(settings, groups),
    }


def soak(args: argparse.Namespace, meta: dict[str, Any]) -> list[dict[str, Any]]:
    plan = plan_for(args)
    settings = own_broker(Settings.load(), plan)
    plan.run_dir.mkdir(parents=True, exist_ok=True)
    samples: list[dict[str, Any]] = []
    meta["run_dir"] = str(plan.run_dir)
    with stop_if_started_within(settings, reporter=print):
        bootstrap = ensure_running(settings, reporter=print)
        parts_settings = run_settings(settings, plan, bootstrap)
        ensure_topics(parts_settings)
        groups = groups_of(parts_settings)
        broker_pid = LocalBroker(settings.broker).pid() if settings.uses_local_broker else None
        with Supervisor(plan.run_dir / "logs", child_env(parts_settings)) as sup:
            running: list[Part] = [
                *start_parts(sup, plan).all(),
                sup.start("simulate-live", live_simulator_argv(plan)),
            ]
            if args.archiver_b_env:
                b = parts_settings.with_section(
                    "lake", path=str(plan.run_dir / "lake-b"), group_id=f"{parts_settings.lake.group_id}-b"
                )
                groups[b.lake.group_id] = groups[parts_settings.lake.group_id]
                extra = dict(args.archiver_b_env)
                running.append(
                    sup.start("archive-b", fleetpulse_argv("archive"), {**settings_env(b), **extra})
                )
            pids = {"broker": broker_pid} if broker_pid else {}
            pids.update({p.name: p.pid for p in running})
            t0 = time.monotonic()
            for k in range(int(args.minutes * 60 // args.every_s) + 1):
                time.sleep(max(0.0, t0 + k * args.every_s - time.monotonic()))
                samples.append(sample((time.monotonic() - t0) / 60, pids, parts_settings, groups))
                print(minute_table(samples[-1]), flush=True)
                for part in running:
                    if not part.alive():
                        print(f"  !! {part.name} exited with {part.process.returncode}; log {part.log_path}")
                if args.json:
                    args.json.write_text(json.dumps({"meta": meta, "samples": samples}, indent=1))
    if not args.keep:
        for folder in ("broker", "lake", "lake-b", "outbox"):
            shutil.rmtree(plan.run_dir / folder, ignore_errors=True)
    return samples


def main() -> None:
    exit_on_sigterm()
    args = parse_args()
    logging.getLogger("kafka").setLevel(logging.ERROR)
    meta: dict[str, Any] = {
        "command": " ".join(["python", *map(shlex.quote, sys.argv)]),
        "preset": args.preset,
        "speed": args.speed,
        "minutes": args.minutes,
        "workers": args.workers,
        "host": platform.node(),
        "cpus": os.cpu_count(),
        "started_utc": f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
    }
    print(
        f"{meta['host']} {platform.python_version()} {meta['started_utc']}: {args.preset} at {args.speed:g}× "
        f"for {args.minutes:g} min"
    )
    samples = soak(args, meta)
    loads = [s["load"][0] for s in samples]
    meta.update(load_min=min(loads), load_max=max(loads), load_mean=sum(loads) / len(loads))
    verdict = judge(samples, args.minutes)
    report = markdown(meta, verdict)
    print(report)
    if args.json:
        args.json.write_text(json.dumps({"meta": meta, "samples": samples, "verdict": verdict}, indent=1))
    if args.md:
        args.md.write_text(report)


if __name__ == "__main__":
    main()
