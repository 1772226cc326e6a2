"""The child process of ``fleetpulse.spark.runtime.spark_sql``: a Delta session runs each query, results to Parquet.

python -m fleetpulse.spark.sql SPEC.json    (SPEC: {"queries": {name: sql}, "conf": {...}, "driver_memory": "1g"})
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow.parquet as pq

from fleetpulse.spark.session import delta_session


def main(argv: list[str] | None = None) -> int:
    spec_path = Path((argv or sys.argv[1:])[0])
    spec = json.loads(spec_path.read_text())
    spark = delta_session(
        "fleetpulse-sql", driver_memory=spec.get("driver_memory", "1g"), extra_conf=spec.get("conf") or {}
    )
    try:
        for name, query in spec["queries"].items():
            pq.write_table(spark.sql(query).toArrow(), spec_path.parent / f"{name}.parquet")
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
