"""Benchmark a detect worker's start against the length of ``fleet.actions`` (not a test).

Every worker folds the actions log into its fleet state before it plans. This measures, for a log of
N actions (synthetic operations carried through their whole lifecycle on a 24,576-host fleet, each
suspected → drain → drained → RMA → repaired → verified → returned), in one process:

1. the start without a snapshot: decode and fold all N records (what every start cost before);
2. the start from a snapshot: read the snapshot (written by ``FleetSnapshots`` after N - tail records,
   pruned to its ``keep_ids``) and fold only the last ``--tail`` records;

and the state each keeps (ids held, snapshot bytes, RSS growth). Kafka's transport is left out of both:
it adds the same per-record cost to the records each start reads.

    .venv/bin/python bench/bench_planner_state.py --actions 1000000 10000000
"""

from __future__ import annotations

import argparse
import gc
import resource
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ground.settings import Settings  # noqa: E402
from schemas import Codec  # noqa: E402
from streams.core.actions import Action
from streams.core.fleet.lifecycle import FleetState, apply_logged
from streams.core.fleet.snapshot import FleetSnapshots  # noqa: E402
from streams.core.log_mark import LogMark  # noqa: E402

HOSTS, DOMAINS = 24_576, 1_536
LIFECYCLE = ("suspected", "drain_requested", "drained", "rma_opened", "repaired", "verified", "returned")
T0 = 1_767_225_600_000


def actions(n: int) -> Iterator[Action]:
    """``n`` actions of operations that run one after another on each host, spread over the fleet."""
    for i in range(n):
        op, step = divmod(i, len(LIFECYCLE))
        host = op % HOSTS
        yield Action(
            action_id=f"act-{i}",
            kind=LIFECYCLE[step],
            host_id=f"h{host}",
            cluster=f"c{host % 2}",
            domain=f"d{host % DOMAINS}",
            operation="rma",
            ts=T0 + i * 100,
            finding_id=f"f-{op}",
            rule="dram_uce_repeat_gpu",
        )


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def fold(records: list[bytes], codec: Codec, state: FleetState) -> float:
    start = time.process_time()
    for value in records:
        apply_logged(state, codec.decode(value).record)
    return time.process_time() - start


def run(n: int, tail: int, folder: Path) -> dict[str, float]:
    codec = Codec()
    records = [codec.encode(a.to_record()) for a in actions(n)]
    gc.collect()
    base = rss_mb()
    whole = FleetState()
    cold = fold(records, codec, whole)
    grown = rss_mb() - base
    held_whole = len(whole.applied) + len(whole.findings) + len(whole.op_hosts)
    del whole
    gc.collect()
    d = Settings().detect
    keeper = FleetSnapshots(
        folder / f"snap-{n}",
        "fleet.actions",
        every=1,
        keep_ids=d.remember_ids,
        ended_horizon_ms=round(d.forget_ended_after_s * 1000),
    )
    head = FleetState()
    fold(records[: n - tail], codec, head)  # what the worker folded before it stopped
    keeper.progress(head, {0: LogMark(n - tail, 0)})
    keeper.flush()
    held_snap = len(head.applied) + len(head.findings) + len(head.op_hosts)
    del head
    gc.collect()
    start = time.process_time()
    state, marks = keeper.load()
    load = time.process_time() - start
    warm = load + fold(records[marks[0].next_offset :], codec, state)
    return {
        "n": n,
        "cold_s": cold,
        "warm_s": warm,
        "load_s": load,
        "grown_mb": grown,
        "held_whole": held_whole,
        "held_snapshot": held_snap,
        "snapshot_mb": keeper.path.stat().st_size / 2**20,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--actions", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--tail", type=int, default=10_000, help="records after the snapshot")
    args = parser.parse_args()
    print(
        "| actions in the log | start without snapshot (CPU s) | start from snapshot (load + tail, CPU s) | ratio "
        "| ids held: whole fold · snapshot | snapshot size | RSS growth of the whole fold |"
    )
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.actions:
            r = run(n, args.tail, Path(tmp))
            print(
                f"| {n:,} | {r['cold_s']:.1f} | {r['warm_s']:.2f} ({r['load_s']:.2f} + tail) "
                f"| {r['cold_s'] / r['warm_s']:.0f}× | {r['held_whole']:,.0f} · {r['held_snapshot']:,.0f} "
                f"| {r['snapshot_mb']:.0f} MB | {r['grown_mb']:,.0f} MB |",
                flush=True,
            )


if __name__ == "__main__":
    main()
