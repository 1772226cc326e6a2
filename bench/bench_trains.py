"""Benchmark change campaigns (not a test): rollout safety over many seeds, and planner throughput.

``safety``: in the in-process twin (``fleetpulse.trains.twin``: the planner's real fold and decisions,
a simulated host side) on the demo fleet's shape (2 clusters x 16 domains x 16 hosts = 512 hosts),
one campaign per seed, for a change that raises the XID rate x3, one that raises it x1.5, and a good
one. It prints, per scenario, how many seeds halted, at what share of the fleet changed, and when.

``throughput``: planner operations a day on one core, with its fold and snapshots: findings for
random hosts of a 24,576-host fleet decided by ``Planner.on_finding``, every domain reconciled each
simulated 10 minutes (repairs complete, waiting work starts), and the fleet state encoded as a
snapshot every 100,000 actions; an operation is one host's repair from suspected to returned.

``cycle``: one good campaign over the whole of meta-48k's shape (2 clusters x 192 domains x 16 hosts =
6,144 hosts) in the twin, ``--parallel`` domains at a time, against its planned bound: the gate's
longest wait (``trains.gate_soak``) plus the domains' rounds (domains / parallel, rounded up) times a
domain's time (its hosts / its buffer, rounded up, times a host's turn: the change's apply time, the
burn-in and three steps for the planner's moves).

    .venv/bin/python bench/bench_trains.py safety --seeds 50
    .venv/bin/python bench/bench_trains.py throughput --operations 200000
    .venv/bin/python bench/bench_trains.py cycle --parallel 48
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import msgspec  # noqa: E402
import numpy as np  # noqa: E402

from fleetpulse.trains import Twin, TwinConfig  # noqa: E402
from producers.changes import ChangeSpec, VersionsSpec  # noqa: E402
from streams.core.findings import Finding  # noqa: E402
from streams.core.fleet.lifecycle import FleetState  # noqa: E402
from streams.core.inventory import Inventory  # noqa: E402
from streams.core.planning.budget import budget  # noqa: E402
from streams.core.planning.planner import Planner  # noqa: E402
from streams.core.policy import load_policy  # noqa: E402
from streams.trains.commands import CampaignSpec, start_record  # noqa: E402

DAY = 86_400_000
MINUTE = 60_000
SCENARIOS = {
    "x3": ChangeSpec(version="560.35", rate_factor={"xid": 3.0}),
    "x1.5": ChangeSpec(version="560.36", rate_factor={"xid": 1.5}),
    "slow5": ChangeSpec(version="560.37", slowdown_pct=5.0),
    "good": ChangeSpec(version="560.40"),
}


def one(scenario: str, seed: int, horizon_days: float, parallel: int, step_minutes: int) -> dict[str, float]:
    change = SCENARIOS[scenario]
    twin = Twin(load_policy(), TwinConfig(step_minutes=step_minutes), VersionsSpec(changes=[change]), seed)
    record = start_record(
        CampaignSpec(
            change=f"driver={change.version}", actor="bench", canary=2, max_parallel_domains=parallel
        ),
        twin.now,
    )
    twin.record(record)
    camp = twin.state.trains.campaigns[record["payload"]["campaign_id"]]
    started, cpu = twin.now, time.process_time()
    report = twin.run(twin.now + int(horizon_days * DAY), stop=lambda t: camp.status != "running")
    return {
        "halted": float(camp.status == "halted"),
        "completed": float(camp.status == "completed"),
        "share": camp.upgraded / len(twin.hosts),  # changed hosts when it stopped (or at the horizon)
        "days": (twin.now - started) / DAY,
        "cpu_s": time.process_time() - cpu,
        "max_change_out": max(report.max_change_out.values()),
        "max_domains": report.max_domains_changing,
        "xid_halt": float(camp.halted_reason.startswith("xid")),
        "step_halt": float("step time:" in camp.halted_reason),
    }


def safety(args: argparse.Namespace) -> None:
    for scenario in args.scenarios:
        runs = []
        for seed in range(
            args.first_seed, args.first_seed + args.seeds
        ):  # a line a seed: a run cut short says what it saw
            runs.append(one(scenario, seed, args.horizon_days, args.parallel, args.step_minutes))
            r = runs[-1]
            state = "halted" if r["halted"] else "completed" if r["completed"] else "running"
            print(
                f"  {scenario} seed {seed}: {state} at {r['share']:.1%} changed after {r['days']:.1f} d",
                flush=True,
            )
        halted = [r for r in runs if r["halted"]]
        shares = sorted(r["share"] for r in halted)
        print(
            f"{scenario}: {len(runs)} seeds, {len(halted)} halted ({len(halted) / len(runs):.0%}), "
            f"{sum(r['completed'] for r in runs):.0f} completed, "
            f"halted before 10 % of the fleet changed: {sum(s < 0.10 for s in shares)}/{len(runs)}"
        )
        if halted:
            q = np.quantile(shares, [0.5, 0.95]) if len(shares) > 1 else [shares[0]] * 2
            print(
                f"  halt point: share of the fleet changed median {q[0]:.1%}, p95 {q[1]:.1%}, max {max(shares):.1%};"
                f" days median {statistics.median(r['days'] for r in halted):.1f};"
                f" by the xid class {sum(r['xid_halt'] for r in halted):.0f},"
                f" by step time {sum(r['step_halt'] for r in halted):.0f}"
            )
        done = [r for r in runs if r["completed"]]
        if done:
            print(f"  completed in median {statistics.median(r['days'] for r in done):.1f} days")
        print(
            f"  most hosts out for the change in one domain {max(r['max_change_out'] for r in runs):.0f}, "
            f"most domains changing at once {max(r['max_domains'] for r in runs):.0f}, "
            f"CPU {sum(r['cpu_s'] for r in runs):.0f} s"
        )


def throughput(args: argparse.Namespace) -> None:
    policy = load_policy()
    hosts, per_domain = 24_576, 16
    inventory = Inventory()
    for i in range(hosts):
        inventory.apply(
            {
                "event_type": "HostInventoried",
                "host_id": f"h{i}",
                "cluster": f"c{i % 2}",
                "ts": 0,
                "payload": {
                    "rack": "r",
                    "maintenance_domain": f"d{i // per_domain}",
                    "fabric": "ib",
                    "install_ts": 0,
                    "gpu_count": 8,
                },
            }
        )
    planner = Planner(policy, members=inventory.hosts_in, view=inventory)
    state, rng = FleetState(), np.random.default_rng(1)
    sizes = inventory.domains()
    now, n, snapshots, snapshot_s = 1_798_761_600_000, 0, 0, 0.0
    per_step = args.per_step
    cpu = time.process_time()
    while n < args.operations:
        now += 600_000
        for i in rng.integers(0, hosts, per_step).tolist():
            n += 1
            domain = f"d{i // per_domain}"
            finding = Finding(
                finding_id=f"f{n}",
                detector="repeat_offender",
                rule="fatal_xid_burst",
                scope="host",
                scope_key=f"h{i}",
                host_id=f"h{i}",
                cluster=f"c{i % 2}",
                ts=now,
                error_class="fell_off_bus",
                count=5,
                window_start=now - DAY,
                window_end=now,
                recommended_action="reboot",
            )
            planner.on_finding(state, finding, domain, sizes[domain])
        # the domains with open work (a live worker ticks only those whose work signature changed)
        for domain in sorted({state.hosts[h].domain for h in state.op_hosts.values()}):
            planner.reconcile(state, domain, sizes[domain], now)
        if state.count // 100_000 > snapshots:
            t = time.perf_counter()
            msgspec.msgpack.encode(state)
            snapshot_s += time.perf_counter() - t
            snapshots += 1
    elapsed = time.process_time() - cpu
    returned = sum(h.completed for h in state.hosts.values())
    print(
        f"{n:,} findings, {returned:,} operations returned, {state.count:,} actions, {snapshots} snapshots "
        f"({snapshot_s:.1f} s) in {elapsed:.1f} CPU s: {returned / elapsed * 86_400:,.0f} operations/day, "
        f"{state.count / elapsed:,.0f} actions/s on one core"
    )


def cycle(args: argparse.Namespace) -> None:
    policy = load_policy()
    config = TwinConfig(
        clusters=2,
        domains_per_cluster=args.domains_per_cluster,
        hosts_per_domain=16,
        step_minutes=args.step_minutes,
    )
    twin = Twin(policy, config, VersionsSpec(), seed=args.seed)  # a version no change lists: a good one
    record = start_record(
        CampaignSpec(change="driver=560.40", actor="bench", canary=2, max_parallel_domains=args.parallel),
        twin.now,
    )
    twin.record(record)
    camp = twin.state.trains.campaigns[record["payload"]["campaign_id"]]
    domains = config.clusters * config.domains_per_cluster
    buffer = budget(config.hosts_per_domain, policy.planner.capacity_buffer_pct)
    turn = config.apply_minutes * MINUTE + policy.trains.burn_in + 3 * config.step_minutes * MINUTE
    per_domain = math.ceil(config.hosts_per_domain / buffer) * turn
    bound = policy.trains.gate_soak + math.ceil(domains / args.parallel) * per_domain
    started, cpu = twin.now, time.process_time()
    report = twin.run(twin.now + 2 * bound, stop=lambda t: camp.status != "running")
    took = twin.now - started
    gate = next((ts for ts, step, _ in camp.history if step == "gate_opened"), None)
    print(
        f"{len(twin.hosts):,} hosts in {domains} domains of {config.hosts_per_domain} (buffer {buffer}), "
        f"{args.parallel} domains at a time: {camp.status}, {camp.upgraded:,} hosts changed"
    )
    print(
        f"  planned bound {bound / DAY:.1f} d = gate soak {policy.trains.gate_soak / DAY:.1f} d + "
        f"{math.ceil(domains / args.parallel)} rounds x {per_domain / DAY:.2f} d a domain "
        f"({math.ceil(config.hosts_per_domain / buffer)} hosts x {turn / 3_600_000:.1f} h)"
    )
    print(
        f"  measured {took / DAY:.1f} d ({took / bound:.0%} of the bound); gate opened after "
        f"{(gate - started) / DAY if gate else float('nan'):.1f} d; most hosts out for the change in a domain "
        f"{max(report.max_change_out.values())}, most domains changing at once {report.max_domains_changing}, "
        f"steps over a domain's buffer {report.over_capacity}; {time.process_time() - cpu:.0f} CPU s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("safety")
    s.add_argument("--seeds", type=int, default=50)
    s.add_argument("--first-seed", type=int, default=0, help="seeds first-seed .. first-seed + seeds - 1")
    s.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=list(SCENARIOS))
    s.add_argument("--horizon-days", type=float, default=120.0)
    s.add_argument("--parallel", type=int, default=1, help="max_parallel_domains")
    s.add_argument("--step-minutes", type=int, default=10)
    t = sub.add_parser("throughput")
    t.add_argument("--operations", type=int, default=200_000)
    t.add_argument("--per-step", type=int, default=200, help="findings per simulated 10 minutes")
    c = sub.add_parser("cycle")
    c.add_argument("--parallel", type=int, default=48, help="max_parallel_domains")
    c.add_argument("--step-minutes", type=int, default=10)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--domains-per-cluster", type=int, default=192, help="192: meta-48k's shape")
    args = parser.parse_args()
    {"safety": safety, "throughput": throughput, "cycle": cycle}[args.command](args)


if __name__ == "__main__":
    main()
