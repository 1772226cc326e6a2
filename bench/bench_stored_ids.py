"""What an archiver start pays to read the ids it checks repeats against (not a test): wall time and Python heap.

    nice -n 10 .venv/bin/python bench/bench_stored_ids.py --rows 10000 100000
    nice -n 10 .venv/bin/python bench/bench_stored_ids.py --rows 0 --samples 1000x24 10000x2

``--rows``: a finding_raised Delta table of that many findings over 30 date partitions (the re-derived tables are
read whole). ``--samples HOSTSxHOURS``: a host_sampled table of HOSTS hosts sampled every 10 s for HOURS hours
up to midnight UTC, one append per 10 minutes of samples (the columns the read touches: event_id, ts, date, and
host_id; no GPU lists), of which the start reads the ids within ``--window-s`` of the newest sample. Each times
``StoredIds.load`` (what ``Archiver`` runs at each start) and the heap its ids hold (tracemalloc).
"""

from __future__ import annotations

import argparse
import datetime as dt
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analytics.lake.reader import Lake  # noqa: E402
from analytics.lake.stored import StoredIds, rederived_types, stamped_types  # noqa: E402
from ground.delta import DATE, DeltaTables, with_date  # noqa: E402
from ground.settings.lake import ALL_FAMILIES  # noqa: E402
from schemas import FindingRaised  # noqa: E402
from schemas.arrow import to_table  # noqa: E402

T0 = 1_760_000_000_000
DAY_MS = 86_400_000


def finding(i: int) -> dict[str, Any]:
    eid = f"fnd-{i:024x}"
    ts = T0 + (i % 30) * DAY_MS
    payload = {
        "finding_id": eid,
        "detector": "slow_host",
        "rule": "slow_host",
        "scope": "host",
        "scope_key": f"h{i % 5000}",
        "error_class": "slow_host",
        "count": 3,
        "window_start": ts,
        "window_end": ts,
        "recommended_action": "drain",
        "severity": "warning",
        "score": 1.0,
        "evidence": {},
    }
    return FindingRaised(
        event_id=eid, host_id=f"h{i % 5000}", cluster="c", ts=ts, payload=payload
    ).to_record()


def measure(rows: int, root: Path) -> str:
    lake = DeltaTables(root)
    table = with_date(to_table("FindingRaised", [finding(i) for i in range(rows)]))
    lake.append("finding_raised", table, partition_by=[DATE])
    stored = StoredIds()
    tracemalloc.start()
    t = time.perf_counter()
    stored.load(Lake(lake), rederived_types(ALL_FAMILIES))
    wall = time.perf_counter() - t
    held, _peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return f"rows {rows}: {stored.held} ids held, load {wall:.2f} s, heap {held / 1e6:.1f} MB"


def write_samples(
    lake: DeltaTables, hosts: int, hours: int, interval_s: int = 10, append_s: int = 600
) -> int:
    """host_sampled rows as an archiver appends them, ``append_s`` of samples per commit; returns the rows."""
    end = int(dt.datetime(2026, 12, 1, tzinfo=dt.UTC).timestamp() * 1000)
    start, step = end - hours * 3_600_000, interval_s * 1000
    per_append = append_s // interval_s
    rows = 0
    for first in range(0, hours * 3600 // interval_s, per_append):
        ticks = range(first, first + per_append)
        table = pa.table(
            {
                "event_id": [f"sim-run-{h:05d}-{k:08d}" for k in ticks for h in range(hosts)],
                "ts": pa.array([start + k * step for k in ticks for _ in range(hosts)], pa.int64()),
                "host_id": [f"h{h:05d}" for _ in ticks for h in range(hosts)],
            }
        )
        lake.append("host_sampled", with_date(table), partition_by=[DATE])
        rows += table.num_rows
    return rows


def measure_samples(spec: str, window_s: float, root: Path) -> str:
    hosts, hours = (int(x) for x in spec.split("x"))
    lake = DeltaTables(root, row_group_size=128 * 1024)
    rows = write_samples(lake, hosts, hours)
    stored = StoredIds()
    tracemalloc.start()
    t = time.perf_counter()
    stored.load(Lake(lake), [], stamped_types(ALL_FAMILIES), window_ms=int(window_s * 1000))
    wall = time.perf_counter() - t
    held, _peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    t = time.perf_counter()
    whole = Lake(lake).scan("host_sampled").select("event_id").collect().height
    whole_s = time.perf_counter() - t
    return (
        f"samples {hosts} hosts x {hours} h ({rows} rows): window {window_s:.0f} s -> {len(stored.recent)} ids, "
        f"load {wall:.2f} s, heap {held / 1e6:.1f} MB (the whole event_id column: {whole} ids in {whole_s:.2f} s)"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, nargs="+", default=[100_000], help="findings in the table")
    p.add_argument("--samples", nargs="*", default=[], help="HOSTSxHOURS host_sampled tables (e.g. 1000x24)")
    p.add_argument("--window-s", type=float, default=600.0, help="lake.resend_window_s")
    args = p.parse_args()
    print("command: python bench/bench_stored_ids.py " + " ".join(sys.argv[1:]))
    for spec in args.samples:
        root = Path(tempfile.mkdtemp(prefix="bench-stored-"))
        try:
            print(measure_samples(spec, args.window_s, root / "lake"), flush=True)
        finally:
            shutil.rmtree(root, ignore_errors=True)
    for rows in [r for r in args.rows if r > 0]:
        root = Path(tempfile.mkdtemp(prefix="bench-stored-"))
        try:
            print(measure(rows, root / "lake"), flush=True)
        finally:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
