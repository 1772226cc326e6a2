"""Benchmark the planner's pure fold: CPU per finding decided in event-time order among incidents (not a test).

A synthetic fleet (domains of 16 hosts) gets random incidents (minutes to days out, three causes) and
findings over 60 days; each finding is held by ``OrderedPlan`` and released as both sources pass its
time, the incidents folded into the same ``FleetState`` as they start. No Kafka: the cost is the
planner's (its wakes, buffers and repair draws). Prints CPU seconds, per finding, and a digest of
the actions (two versions of the planner that decide alike print the same digest).

    .venv/bin/python bench/bench_planner_fold.py --hosts 1600 --findings 2000 --incidents 4000
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from schemas import IncidentReported  # noqa: E402
from streams.core.findings import Finding  # noqa: E402
from streams.core.fleet.lifecycle import FleetState, apply_logged  # noqa: E402
from streams.core.planning.order import Mark, OrderedPlan  # noqa: E402
from streams.core.planning.planner import Planner  # noqa: E402
from streams.core.policy import load_policy  # noqa: E402

HOUR, DAY, T0, DOMAIN = 3_600_000, 86_400_000, 1_767_225_600_000, 16
SOURCES = ("errors/0", "cluster/0")


def history(hosts: list[str], findings: int, incidents: int, seed: int) -> list[tuple[int, int, Any]]:
    """(ts, 0 incident | 1 finding, record) in event-time order."""
    rng = random.Random(seed)
    events: list[tuple[int, int, Any]] = []
    for i in range(incidents):
        host, start = rng.choice(hosts), T0 + rng.randrange(60 * DAY)
        end = start + rng.choice([10 * 60_000, 2 * HOUR, 30 * HOUR, 4 * DAY])
        payload = {
            "cause": rng.choice(["hbm3", "network", "psu"]),
            "source_class": "GPU/DBE",
            "source_text": "",
            "component": None,
            "component_kind": None,
            "start_ts": start,
            "end_ts": end,
        }
        record = IncidentReported(event_id=f"i{i}", host_id=host, cluster="c", ts=start, payload=payload)
        events.append((start, 0, record.to_record()))
    for i in range(findings):
        host, ts = rng.choice(hosts), T0 + rng.randrange(60 * DAY)
        finding = Finding(
            f"f{i}",
            "repeat_offender",
            "dram_uce_repeat_gpu",
            "host",
            host,
            host,
            "c0",
            ts,
            "dram_uce",
            2,
            ts - DAY,
            ts,
            rng.choice(["rma", "reboot", "diagnostics"]),
        )
        events.append((ts, 1, finding))
    return sorted(events, key=lambda e: (e[0], e[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=1600)
    parser.add_argument("--findings", type=int, default=2000)
    parser.add_argument("--incidents", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    hosts = [f"h{i:05d}" for i in range(args.hosts)]

    def domain_of(host: str) -> str:
        return f"d{int(host[1:]) // DOMAIN}"

    def members(domain: str) -> list[str]:
        first = int(domain[1:]) * DOMAIN
        return hosts[first : first + DOMAIN]

    events = history(hosts, args.findings, args.incidents, args.seed)
    planner = Planner(load_policy(None), members=members)
    plan = OrderedPlan(planner, frozenset(SOURCES), {}, size=lambda d: DOMAIN, domain_of=domain_of)
    state, digest, actions = FleetState(), hashlib.sha256(), 0
    cpu = time.process_time()
    for ts, kind, event in events:
        if kind == 0:
            apply_logged(state, event)
            continue
        out = plan.finding(state, event, domain_of(event.host_id))
        out += plan.progress(state, [(s, Mark(ts)) for s in SOURCES])
        for action in out:
            digest.update(f"{action.kind}|{action.host_id}|{action.ts}\n".encode())
        actions += len(out)
    cpu = time.process_time() - cpu
    print(
        f"hosts={args.hosts} findings={args.findings} incidents={args.incidents} actions={actions} "
        f"cpu={cpu:.2f}s per_finding={cpu / max(args.findings, 1) * 1e6:.0f}us digest={digest.hexdigest()[:12]}"
    )


if __name__ == "__main__":
    main()
