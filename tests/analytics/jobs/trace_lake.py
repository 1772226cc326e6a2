"""A small lake shaped like an imported public fault trace: incidents with start/end, operator events,
hosts inventoried without an install date, no job tables, and hand-countable figures."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from tests.analytics.jobs.factories import HOUR, START, _envelope, write_table

HOSTS = [f"node{i:03d}" for i in range(8)]
# (host, cause, source class, text, component kind, component, start hours after START, duration h or None)
INCIDENTS: list[tuple[str, str | None, str, str, str | None, str | None, float, float | None]] = [
    ("node000", "faulty_gpu", "gpu/lost/xid79", "GPU 3 lost", "gpu", "3", 10, 4.0),
    ("node001", "faulty_gpu", "gpu/lost/xid79", "GPU 1 lost", "gpu", "1", 30, 8.0),
    ("node002", "faulty_gpu", "gpu/dbe/threshold", "DBE over threshold", "gpu", "0", 50, 12.0),
    ("node003", "power", "hw/psu/fail", "PSU 2 failed", "psu", "2", 70, 1.0),
    ("node004", "power", "hw/psu/fail", "PSU 1 failed", "psu", "1", 90, 2.0),
    ("node005", "power", "hw/psu/fail", "PSU 1 failed", "psu", "1", 110, 3.0),
    ("node006", "power", "hw/psu/fail", "PSU 2 failed", "psu", "2", 130, 10.0),
    ("node007", "power", "hw/psu/fail", "PSU 1 failed", "psu", "1", 150, None),  # still open
    ("node000", "unclassified", "other/unknown", "unknown error", None, None, 170, 6.0),
    ("node001", None, "other/unknown", "unknown error", None, None, 190, 2.0),
    ("node002", "unclassified", "stress/fail", "stress test failed", None, None, 210, None),
    ("node003", "network", "net/link/down", "link down port 4", "port", "4", 230, 0.5),
]
# Hand-computed from the rows above (closed outages only).
POWER_MEDIAN_H = 2.5  # of 1, 2, 3, 10
POWER_P90_H = 7.9  # linear: 3 + 0.7 · (10 − 3)
FAULTY_GPU_MEDIAN_H = 8.0  # of 4, 8, 12
# (host, ts hours after START, kind, cause)
OPERATOR: list[tuple[str, float, str, str | None]] = [
    ("node004", 300, "out_of_service", "fan"),
    ("node004", 301, "repair_started", None),
    ("node004", 305, "returned_to_service", None),
    ("node005", 310, "out_of_service", None),
    ("node005", 312, "returned_to_service", None),
    ("node006", 320, "out_of_service", "fan"),  # still out
]


def build_trace_lake(lake: Path, install_ts: int | None = None) -> None:
    """Write the trace lake; every host's ``install_ts`` is ``install_ts``, or, when None, hosts are
    inventoried as ``fleetpulse import`` creates them (rack ``imported``, install_ts the trace's start)."""
    n = len(HOSTS)
    hosts = np.array(HOSTS)
    rack = "imported" if install_ts is None else "r0"
    install_ts = START if install_ts is None else install_ts
    inv = pl.DataFrame(
        _envelope("HostInventoried", hosts, np.full(n, "trace"), np.full(n, START))
        | {
            "rack": rack,
            "fabric": "unknown",
            "maintenance_domain": [f"d{i // 4}" for i in range(n)],
            "sku": "unknown",
            "install_ts": np.full(n, install_ts, np.int64),
            "gpu_count": np.full(n, 8, np.int32),
            "nic_ports": np.full(n, 8, np.int32),
        }
    )
    write_table(lake, "host_inventoried", inv)
    rows = pl.DataFrame(
        INCIDENTS,
        orient="row",
        schema=[
            "host_id",
            "cause",
            "source_class",
            "source_text",
            "component_kind",
            "component",
            "start_h",
            "dur_h",
        ],
    )
    start = (START + rows["start_h"] * HOUR).cast(pl.Int64)
    end = (start + rows["dur_h"] * HOUR).cast(pl.Int64)
    incidents = pl.DataFrame(
        _envelope(
            "IncidentReported", rows["host_id"].to_numpy(), np.full(rows.height, "trace"), start.to_numpy()
        )
        | {
            "cause": rows["cause"],
            "source_class": rows["source_class"],
            "source_text": rows["source_text"],
            "component": rows["component"],
            "component_kind": rows["component_kind"],
            "start_ts": start,
            "end_ts": end,
        }
    )
    # The same import archived twice (at-least-once delivery): the jobs must count each incident once.
    write_table(lake, "incidents", pl.concat([incidents, incidents.head(3)]))
    ops = pl.DataFrame(OPERATOR, orient="row", schema=["host_id", "h", "kind", "cause"])
    ts = (START + ops["h"] * HOUR).cast(pl.Int64).to_numpy()
    write_table(
        lake,
        "operator_events",
        pl.DataFrame(
            _envelope("OperatorEventRecorded", ops["host_id"].to_numpy(), np.full(ops.height, "trace"), ts)
            | {
                "kind": ops["kind"],
                "actor": "oncall",
                "reason": "ticket",
                "ticket_id": [f"T-{i}" for i in range(ops.height)],
                "cause": ops["cause"],
            }
        ),
    )
