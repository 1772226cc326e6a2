"""A small synthetic lake with known truth, for the jobs' unit tests (no simulator needed).

Writes the lake's Delta tables (``<lake>/<table>/``, partitioned by ``date``) with the flat columns
the jobs read; every generated quantity comes from a parameter of ``SyntheticFleet``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa

from ground.delta import DATE, DeltaTables, with_date
from schemas.arrow import table_name, table_schema
from schemas.events import EVENT_CLASSES

DAY = 86_400_000
HOUR = 3_600_000
START = 1_735_689_600_000  # 2025-01-01T00:00:00Z
EVENT_TYPES = {table_name(event_type): event_type for event_type in EVENT_CLASSES}


@dataclass(frozen=True)
class SyntheticFleet:
    hosts_per_cluster: int = 200
    days: float = 90.0
    history_days: float = 400.0
    weibull_shape: float = 0.6
    early_events_per_host: float = 2.0  # expected Λ over [0, history + days] of an early-life mode
    flat_per_host_day: float = 0.004  # other hardware modes, constant rate
    signal_free_per_host_day: float = 0.002
    lemons: int = 4
    roce_step_ms: float = 1000.0
    ib_step_ms: float = 980.0
    roce_bw: float = 360.0
    ib_bw: float = 372.0
    slow_hosts: int = 6
    slow_factor: float = 0.15
    sample_every_ms: int = HOUR
    sample_days: float = 10.0
    roce_repair_h: float = 30.0
    ib_repair_h: float = 20.0
    seed: int = 1
    job_sizes_hosts: tuple[int, ...] = field(default=(64, 32, 16, 8, 4, 2, 1))


def write_table(lake: Path, table: str, df: pl.DataFrame) -> None:
    """Append ``df`` to the lake's Delta table in the table's own columns; those ``df`` lacks are null.

    A column with nulls is nullable whatever the event schema says: tests feed the jobs what it forbids.
    """
    data = df.to_arrow()
    schema = table_schema(EVENT_TYPES[table])
    columns = [
        data.column(f.name).cast(f.type) if f.name in data.column_names else pa.nulls(df.height, f.type)
        for f in schema
    ]
    fields = [f.with_nullable(f.nullable or c.null_count > 0) for f, c in zip(schema, columns, strict=True)]
    rows = pa.Table.from_arrays(columns, schema=pa.schema(fields))
    DeltaTables(lake).append(table, with_date(rows), partition_by=[DATE])


def _envelope(event_type: str, host: np.ndarray, cluster: np.ndarray, ts: np.ndarray) -> dict:
    n = len(ts)
    return {
        "event_id": [f"{event_type}-{i}" for i in range(n)],
        "event_type": [event_type] * n,
        "schema_version": np.ones(n, dtype=np.int32),
        "host_id": host,
        "cluster": cluster,
        "ts": ts.astype(np.int64),
        "agent_seq": np.arange(n, dtype=np.int64),
    }


def build_lake(lake: Path, fleet: SyntheticFleet = SyntheticFleet()) -> dict:
    """Write the synthetic lake; return the truth (inventory, faults, slow hosts) as frames."""
    rng = np.random.default_rng(fleet.seed)
    n = 2 * fleet.hosts_per_cluster
    host = np.array([f"h{i:05d}" for i in range(n)])
    is_roce = np.arange(n) < fleet.hosts_per_cluster
    cluster = np.where(is_roce, "c-roce", "c-ib")
    fab = np.where(is_roce, "roce", "infiniband")
    end = START + int(fleet.days * DAY)
    install = START - (rng.uniform(-0.3, 1.0, n) * fleet.history_days * DAY).astype(np.int64)
    inv = pl.DataFrame(
        _envelope("HostInventoried", host, cluster, np.full(n, START))
        | {
            "rack": [f"r{i // 2}" for i in range(n)],
            "fabric": fab,
            "maintenance_domain": [f"{c}-d{i // 8}" for i, c in enumerate(cluster)],
            "sku": ["H100"] * n,
            "install_ts": install,
            "gpu_count": np.full(n, 8, np.int32),
            "nic_ports": np.full(n, 8, np.int32),
        }
    )
    write_table(lake, "host_inventoried", inv.with_columns(pl.lit(START).alias("ts")))
    a0 = np.maximum(0.0, (START - install) / DAY)
    a1 = (end - install) / DAY
    beta = fleet.weibull_shape
    eta = (fleet.history_days * 1.3) / fleet.early_events_per_host ** (1 / beta)
    faults: list[tuple] = []  # (host idx, ts, kind, gpu, port)
    for i in range(n):
        if a1[i] <= a0[i]:
            continue
        for kind in ("fell_off_bus", "link_down"):
            lo, hi = (a0[i] / eta) ** beta, (a1[i] / eta) ** beta
            for u in rng.uniform(lo, hi, rng.poisson(hi - lo)):
                age = eta * u ** (1 / beta)
                faults.append((i, int(install[i] + age * DAY), kind, rng.integers(8), rng.integers(8)))
        span = a1[i] - a0[i]
        for kind in ("dram_uce", "sram_uce", "gsp_error", "nvlink"):
            for age in rng.uniform(a0[i], a1[i], rng.poisson(fleet.flat_per_host_day * span)):
                faults.append((i, int(install[i] + age * DAY), kind, rng.integers(8), rng.integers(8)))
        for age in rng.uniform(a0[i], a1[i], rng.poisson(fleet.signal_free_per_host_day * span)):
            faults.append((i, int(install[i] + age * DAY), "software", -1, -1))
    # Lemons among hosts in service by mid-run, so all their repeats fall inside the window.
    lemon_hosts = rng.choice(
        np.flatnonzero(install < START + fleet.days / 2 * DAY), fleet.lemons, replace=False
    )
    for i in lemon_hosts:
        t0 = max(START, install[i]) + int(rng.uniform(0, 0.3) * fleet.days * DAY)
        for r in range(5):
            faults.append((i, t0 + r * 2 * DAY, "fell_off_bus", 3, 0))
    f = pl.DataFrame(faults, schema=["hi", "ts", "kind", "gpu", "port"], orient="row").filter(
        (pl.col("ts") >= START) & (pl.col("ts") < end)
    )
    f = f.with_columns(
        pl.Series("host_id", host)[f["hi"]].alias("host_id"), pl.Series(cluster)[f["hi"]].alias("cluster")
    )
    xid_of = {"fell_off_bus": 79, "dram_uce": 48, "sram_uce": 95, "gsp_error": 119, "nvlink": 74}
    cause_of = {
        "fell_off_bus": "faulty_gpu",
        "dram_uce": "hbm3",
        "sram_uce": "gpu_sram",
        "gsp_error": "gpu_system_processor",
        "nvlink": "faulty_gpu",
        "link_down": "network",
        "software": "software",
    }
    xf = f.filter(pl.col("kind").is_in(list(xid_of)))
    noise_idx = rng.integers(0, n, 50)
    noise = pl.DataFrame(
        {
            "hi": noise_idx,
            "ts": START + rng.integers(0, end - START, 50),
            "kind": "noise",
            "gpu": rng.integers(0, 8, 50),
            "port": 0,
            "host_id": host[noise_idx],
            "cluster": cluster[noise_idx],
        }
    )
    xall = pl.concat(
        [
            xf.with_columns(pl.col("kind").replace_strict(xid_of).alias("xid")),
            noise.with_columns(pl.lit(13).alias("xid")),
        ],
        how="diagonal_relaxed",
    ).sort("ts")
    write_table(
        lake,
        "xid_raised",
        pl.DataFrame(
            _envelope(
                "XidRaised", xall["host_id"].to_numpy(), xall["cluster"].to_numpy(), xall["ts"].to_numpy()
            )
            | {
                "gpu": xall["gpu"].cast(pl.Int32),
                "xid": xall["xid"].cast(pl.Int32),
                "pci_bus_id": "0000:00:00.0",
                "message": "",
            }
        ),
    )
    lf = f.filter(pl.col("kind") == "link_down")
    flap_idx = rng.integers(0, n, 40)
    links = pl.concat(
        [
            lf.select(
                "host_id",
                "cluster",
                "ts",
                pl.col("port").cast(pl.Int32),
                pl.lit("down").alias("kind"),
                pl.lit(1, pl.Int32).alias("count"),
            ),
            pl.DataFrame(
                {
                    "host_id": host[flap_idx],
                    "cluster": cluster[flap_idx],
                    "ts": START + rng.integers(0, end - START, 40),
                    "port": np.zeros(40, np.int32),
                    "kind": "flap",
                    "count": np.ones(40, np.int32),
                }
            ),
        ]
    ).sort("ts")
    write_table(
        lake,
        "link_event_observed",
        pl.DataFrame(
            _envelope(
                "LinkEventObserved",
                links["host_id"].to_numpy(),
                links["cluster"].to_numpy(),
                links["ts"].to_numpy(),
            )
            | {
                "port": links["port"],
                "kind": links["kind"],
                "count": links["count"],
                "peer": [None] * links.height,
            }
        ),
    )
    # Jobs: hosts of each cluster are packed into jobs of the configured sizes, cycling.
    job_of = np.empty(n, dtype=object)
    for c in (0, 1):
        idx, k, j = np.arange(c * fleet.hosts_per_cluster, (c + 1) * fleet.hosts_per_cluster), 0, 0
        while k < len(idx):
            size = fleet.job_sizes_hosts[j % len(fleet.job_sizes_hosts)]
            job_of[idx[k : k + size]] = f"job-{c}-{j}"
            k, j = k + size, j + 1
    job_hosts = pl.Series(job_of).value_counts().rename({"": "job_id"} if False else {})
    size_of = dict(zip(job_hosts[:, 0].to_list(), job_hosts["count"].to_list(), strict=True))
    intr = f.select("host_id", "cluster", "ts", "kind", pl.col("gpu"), pl.col("hi"))
    write_table(
        lake,
        "job_interrupted",
        pl.DataFrame(
            _envelope(
                "JobInterrupted",
                intr["host_id"].to_numpy(),
                intr["cluster"].to_numpy(),
                intr["ts"].to_numpy(),
            )
            | {
                "job_id": job_of[intr["hi"].to_numpy()],
                "cause": intr["kind"].replace_strict(cause_of),
                "gpu": intr["gpu"].cast(pl.Int32).replace(-1, None),
                "job_gpus": np.array([size_of[job_of[h]] * 8 for h in intr["hi"].to_numpy()], np.int32),
                "detail": intr["kind"],
            }
        ),
    )
    # Samples over the last sample_days: fabric baseline, small noise, slow hosts slower. A sample is the
    # mean over its interval, so its noise is well under the detector's 2 % minimum slowdown / 3.5 robust
    # SDs (else a healthy host is slow in more windows than the evidence's healthy share allows).
    slow = rng.choice(n, fleet.slow_hosts, replace=False)
    factor = np.ones(n)
    factor[slow] += fleet.slow_factor
    ts = np.arange(end - int(fleet.sample_days * DAY), end, fleet.sample_every_ms)
    hh = np.repeat(np.arange(n), len(ts))
    tt = np.tile(ts, n)
    base = np.where(is_roce, fleet.roce_step_ms, fleet.ib_step_ms)[hh] * factor[hh]
    bw = np.where(is_roce, fleet.roce_bw, fleet.ib_bw)[hh]
    write_table(
        lake,
        "host_sampled",
        pl.DataFrame(
            _envelope("HostSampled", host[hh], cluster[hh], tt)
            | {
                # each sample covers its interval (as the simulator's do): 10-s samples an hour apart
                # would leave a host away from its windows between samples, and its evidence forgotten
                "interval_s": np.full(len(tt), fleet.sample_every_ms // 1000, np.int32),
                "job_id": job_of[hh],
                "step_time_ms": (base * (1 + rng.normal(0, 0.004, len(tt)))).astype(np.float32),
                "bus_bw_gbps": (bw * (1 + rng.normal(0, 0.004, len(tt))) / factor[hh]).astype(np.float32),
            }
        ),
    )
    # Maintenance: each hardware fault opens an episode drain_requested → drained → repaired → returned.
    hw = f.filter(pl.col("kind") != "software")
    rows = []
    for hi, t in zip(hw["hi"].to_list(), hw["ts"].to_list(), strict=True):
        mean = fleet.roce_repair_h if is_roce[hi] else fleet.ib_repair_h
        dur = rng.gamma(4.0, mean / 4.0) * HOUR
        for k, frac in (("drain_requested", 0.0), ("drained", 0.1), ("repaired", 0.8), ("returned", 1.0)):
            rows.append((host[hi], cluster[hi], int(t + 1 + frac * dur), k))
    acts = pl.DataFrame(rows, schema=["host_id", "cluster", "ts", "kind"], orient="row").sort("ts")
    acts = acts.filter(pl.col("ts") < end)
    write_table(
        lake,
        "maintenance_action_recorded",
        pl.DataFrame(
            _envelope(
                "MaintenanceActionRecorded",
                acts["host_id"].to_numpy(),
                acts["cluster"].to_numpy(),
                acts["ts"].to_numpy(),
            )
            | {
                "action_id": [f"a{i}" for i in range(acts.height)],
                "kind": acts["kind"],
                "operation": "rma",
                "maintenance_domain": "d",
                "finding_id": [None] * acts.height,
                "rule": [None] * acts.height,
                "reason": "",
                "caused_by": [None] * acts.height,
            }
        ),
    )
    return {
        "faults": f,
        "slow_hosts": set(host[slow].tolist()),
        "lemon_hosts": set(host[lemon_hosts].tolist()),
        "start_ts": START,
        "end_ts": end,
        "eta": eta,
    }
