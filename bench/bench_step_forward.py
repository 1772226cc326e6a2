"""Benchmark the worker cost of forwarding step time to campaigns (not a test).

Each window the cluster stage closes becomes one ``steps_counted`` action per open campaign
(``streams.trains.step_forward``): with 5-minute windows, 288 a day per cluster and campaign. Each
costs the cluster worker the comparison (``StepForward.observe``) and the record's encoding, and
every worker the fold of the action and the planner's next tick (``streams.core.planning.ticks``),
which takes every domain's work signature again; only a window that halts the campaign changes them
(``Conductor.signature``), so a tick reconciles no domain for the others. This runs a good campaign on meta-48k's shape in the twin for
``--days`` (so the fold holds the domains a live planner would), then times those parts on that
state, one window at a time; the broker's send is not counted.

    .venv/bin/python bench/bench_step_forward.py --days 3 --windows 40
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from fleetpulse.trains import Twin, TwinConfig  # noqa: E402
from producers.changes import VersionsSpec  # noqa: E402
from schemas.codec import Codec  # noqa: E402
from streams.core.fleet.lifecycle import apply  # noqa: E402
from streams.core.peers.scores import Verdict  # noqa: E402
from streams.core.planning.ticks import TickSchedule  # noqa: E402
from streams.core.policy import load_policy  # noqa: E402
from streams.trains.commands import CampaignSpec, start_record  # noqa: E402
from streams.trains.step_forward import StepForward  # noqa: E402

DAY = 86_400_000
WINDOW = 5 * 60_000
PER_DAY = DAY // WINDOW  # windows a day


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--days", type=float, default=3.0, help="simulated days of the campaign before timing"
    )
    parser.add_argument("--windows", type=int, default=40, help="windows timed")
    parser.add_argument("--parallel", type=int, default=48, help="max_parallel_domains")
    parser.add_argument("--domains-per-cluster", type=int, default=192, help="192: meta-48k's shape")
    args = parser.parse_args()
    config = TwinConfig(clusters=2, domains_per_cluster=args.domains_per_cluster, hosts_per_domain=16)
    twin = Twin(load_policy(), config, VersionsSpec(), seed=0)
    record = start_record(
        CampaignSpec(change="driver=560.40", actor="bench", canary=2, max_parallel_domains=args.parallel),
        twin.now,
    )
    twin.record(record)
    camp = twin.state.trains.campaigns[record["payload"]["campaign_id"]]
    twin.run(twin.now + int(args.days * DAY), stop=lambda t: camp.status != "running")
    state, planner, now = twin.state, twin.planner, twin.now

    def move(domain: str) -> None:
        planner.reconcile(state, domain, twin.inventory.domain_size(domain), now)

    ticks = TickSchedule(planner, twin.inventory.domain_size)
    ticks.tick(state, now, move)  # every domain's signature taken once, as a running worker has them
    moved: list[int] = []

    def counting(domain: str) -> None:
        moved.append(1)
        move(domain)

    t0 = time.process_time()
    ticks.tick(state, now, counting)  # nothing changed: signatures only
    idle = time.process_time() - t0

    def split(name: str) -> int:  # the smaller side of the comparison: hosts changed, or not asked yet
        hosts = [h for h, c, _ in twin.hosts if c == name]
        changed = sum(h in camp.visits and camp.visits[h].applied_ts is not None for h in hosts)
        return min(changed, len(hosts) - changed)

    name = max(sorted({c for _, c, _ in twin.hosts}), key=split)  # a cluster with both sides
    cluster = [h for h, c, _ in twin.hosts if c == name]
    forward, codec, rng = StepForward(twin.inventory.domain_of), Codec(), np.random.default_rng(1)
    timed: dict[str, list[float]] = {"observe": [], "encode": [], "fold": [], "tick": []}
    domains_moved: list[int] = []
    for i in range(args.windows):
        start = now - (i + 1) * WINDOW  # windows already closed, each new to the fold
        rel = np.exp(rng.normal(0.0, 0.02, len(cluster)))
        verdicts = [
            Verdict(h, start, start + WINDOW, 0.0, 0.0, False, 1000.0 * r, 1000.0)
            for h, r in zip(cluster, rel, strict=True)
        ]
        t = time.process_time()
        actions = forward.observe(state, name, verdicts)
        timed["observe"].append(time.process_time() - t)
        t = time.process_time()
        for a in actions:
            codec.encode(a.to_record())
        timed["encode"].append(time.process_time() - t)
        t = time.process_time()
        for a in actions:
            apply(state, a)
        timed["fold"].append(time.process_time() - t)
        moved.clear()
        t = time.process_time()
        ticks.tick(state, now, counting)
        timed["tick"].append(time.process_time() - t)
        domains_moved.append(len(moved))
    up = sum(v.applied_ts is not None for v in camp.visits.values())
    print(
        f"{len(twin.hosts):,} hosts, {len(state.domains)} domains in the fold, campaign {camp.status} after "
        f"{args.days:g} d ({up:,} hosts changed, {len(camp.steps)} step windows); cluster {name}: {len(cluster):,} hosts, {split(name):,} on the smaller side"
    )
    print(f"  an idle tick (no change): {idle * 1000:.1f} ms")
    per = {k: statistics.median(v) for k, v in timed.items()}
    for k, v in per.items():
        print(f"  {k}: median {v * 1000:.2f} ms a window (max {max(timed[k]) * 1000:.2f})")
    print(
        f"  domains reconciled by the tick after each window: median {statistics.median(domains_moved):.0f}"
    )
    worker = per["observe"] + per["encode"] + per["fold"]
    total = worker + per["tick"]
    print(
        f"  a day per cluster and campaign ({PER_DAY} windows): cluster stage {worker * PER_DAY:.1f} CPU s, "
        f"planner tick {per['tick'] * PER_DAY:.1f} CPU s, in all {total * PER_DAY:.1f} CPU s "
        f"({total * PER_DAY / 864:.2f} % of a core)"
    )


if __name__ == "__main__":
    main()
