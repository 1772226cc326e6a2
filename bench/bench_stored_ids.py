"""What an archiver start pays to read the ids of the re-derived tables (not a test): wall time and Python heap.

    nice -n 10 .venv/bin/python bench/bench_stored_ids.py --rows 10000 100000

Writes a finding_raised Delta table of ``--rows`` findings over 30 date partitions into a temporary lake, then
times ``StoredIds.load`` (what ``Archiver`` runs at each start) and the heap its id sets hold (tracemalloc).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analytics.lake.reader import Lake  # noqa: E402
from analytics.lake.stored import StoredIds, rederived_types  # noqa: E402
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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, nargs="+", default=[100_000], help="findings in the table")
    args = p.parse_args()
    print("command: python bench/bench_stored_ids.py " + " ".join(sys.argv[1:]))
    for rows in args.rows:
        root = Path(tempfile.mkdtemp(prefix="bench-stored-"))
        try:
            print(measure(rows, root / "lake"), flush=True)
        finally:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
