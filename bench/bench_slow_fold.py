"""CPU per sample of the slow-host detector's pure stages (not a test): host windows (``FetchedBatch``),
then the cluster stage (``ClusterStage.add_bundle``: peer test and the verdict fold), as the worker runs them.

    .venv/bin/python bench/bench_slow_fold.py [--hosts 512] [--hours 6] [--reps 3]

A cluster of jobs of many sizes (1 to 128 hosts) at their own paces, samples every 60 s, three slow
hosts; one bundle per 2,000 samples. Prints the best of ``--reps`` CPU times per sample and the findings
(to compare two versions on the same history: run it from each version's tree).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from streams.core.peers.messages import ClusterItem  # noqa: E402
from streams.core.peers.stage import ClusterStage  # noqa: E402
from streams.core.policy import Policy  # noqa: E402
from streams.core.samples.checkpoint import PartitionState  # noqa: E402
from streams.core.samples.folder import FetchedBatch, SampleFolder  # noqa: E402
from streams.sample_partitions import YIELD_EVERY  # noqa: E402

START_TS = 1_767_225_600_000
SIZES = (128, 64, 32, 16, 8, 4, 3, 2, 2, 1, 1)


def history(hosts: int, hours: float, seed: int = 5) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    names, k, j = [], 0, 0
    while k < hosts:
        size = min(SIZES[j % len(SIZES)], hosts - k)
        pace = rng.uniform(0.6, 1.8)
        names += [(f"h{k + i:05d}", f"job{j:03d}", pace) for i in range(size)]
        k, j = k + size, j + 1
    slow = {names[5][0]: 1.10, names[200][0]: 1.04, names[hosts - 30][0]: 1.10}
    out = []
    for step in range(int(hours * 60)):
        ts = START_TS + step * 60_000
        for host, job, pace in names:
            factor = slow.get(host, 1.0) if (host != names[200][0] or (step // 30) % 3 == 0) else 1.0
            out.append(
                {
                    "event_type": "HostSampled",
                    "host_id": host,
                    "cluster": "c0",
                    "ts": ts,
                    "payload": {
                        "job_id": job,
                        "step_time_ms": 1000.0 * pace * factor * (1 + rng.gauss(0, 0.004)),
                        "bus_bw_gbps": 380.0 * (1 + rng.gauss(0, 0.004)),
                        "interval_s": 60,
                        "gpus": [
                            {
                                "pcie_link_gen": 5,
                                "pcie_link_gen_max": 5,
                                "pcie_link_width": 16,
                                "pcie_link_width_max": 16,
                                "throttle_reasons": 0,
                            }
                        ]
                        * 8,
                        "nics": [{"rx_gbps": 48.0}] * 8,
                    },
                }
            )
    return out


def run(records: list[dict[str, Any]]) -> tuple[float, list[tuple[str, int]]]:
    policy = Policy()
    folder = SampleFolder(policy, nsrc=1, clusters=lambda: {"c0"})
    state = PartitionState(partition=0)
    stage = ClusterStage(policy.slow_host)
    store: dict[str, Any] = {}
    found: list[tuple[str, int]] = []
    t0 = time.process_time()
    for i in range(0, len(records), 2_000):
        batch = FetchedBatch(folder, state, None)  # as the samples stage folds one fetched batch
        for n, record in enumerate(records[i : i + 2_000], 1):
            if n % YIELD_EVERY == 0:
                batch.fold()
            batch.add(record)
        batch.fold()
        items: list[ClusterItem] = batch.bundles.get("c0", [])
        findings, _, _ = stage.add_bundle(store, "c0", items, f"0:{i}")
        found += [(f.host_id, f.ts) for f in findings]
    return time.process_time() - t0, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=512)
    parser.add_argument("--hours", type=float, default=6)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    records = history(args.hosts, args.hours)
    best, found = min(run(records) for _ in range(args.reps))
    print(
        f"{len(records)} samples, {args.hosts} hosts, {args.hours:g} h: "
        f"{best / len(records) * 1e6:.2f} us CPU per sample (best of {args.reps})"
    )
    print("findings:", sorted(found))


if __name__ == "__main__":
    main()
