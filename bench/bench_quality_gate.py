"""Benchmark the quality gate's known-host check against the fleet's size (not a test).

    nice -n 10 .venv/bin/python bench/bench_quality_gate.py --known 1000 48000 125000 --repeats 3

One 20,000-row host_sampled batch from 1,000 hosts is validated with N known hosts, once passing and
once failing (four of its hosts unknown, so the detailed second run happens). ``batch hosts`` is the
gate as shipped (GX gets the known hosts that occur in the batch); the same-run baseline ``whole set``
hands GX all N, as the gate did before. Median seconds per ``QualityGate.validate``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_lake import host_sampled_table, host_sampled_values  # noqa: E402

from analytics.lake.synthetic import host_ids  # noqa: E402
from analytics.quality import gate as gate_module  # noqa: E402
from analytics.quality.gate import QualityGate  # noqa: E402
from schemas import Codec  # noqa: E402

SHIPPED = gate_module._known_in_batch


def whole_set(frame: Any, columns: tuple[str, ...], known: Any) -> list[str]:
    return sorted(known)


def median_s(gate: QualityGate, table: Any, known: set[str], repeats: int) -> float:
    now = dt.datetime.now(dt.UTC)
    gate.validate("host_sampled", table, now, known)  # warm: the suite variant is built on first use
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        gate.validate("host_sampled", table, now, known)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--known", type=int, nargs="+", default=[1000, 48_000, 125_000], help="known-host counts")
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    print("command: python bench/bench_quality_gate.py " + " ".join(sys.argv[1:]))
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    codec = Codec()
    batch = host_sampled_table(codec, host_sampled_values(codec))
    in_batch = set(batch.column("host_id").to_pylist())
    unknown = set(sorted(in_batch)[:4])
    gate = QualityGate()
    print(f"batch: {batch.num_rows:,} rows, {len(in_batch):,} hosts")
    print("| known hosts | verdict | batch hosts (s) | whole set (s) | whole set / batch hosts |")
    print("|---|---|---|---|---|")
    for n in args.known:
        known = {*host_ids(n), *in_batch}
        for verdict, hosts in (("passes", known), ("fails", known - unknown)):
            gate_module._known_in_batch = SHIPPED  # type: ignore[attr-defined]
            shipped = median_s(gate, batch, hosts, args.repeats)
            gate_module._known_in_batch = whole_set  # type: ignore[attr-defined]
            baseline = median_s(gate, batch, hosts, args.repeats)
            print(
                f"| {len(hosts):,} | {verdict} | {shipped:.2f} | {baseline:.2f} | {baseline / shipped:.1f}x |",
                flush=True,
            )
    gate_module._known_in_batch = SHIPPED  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
