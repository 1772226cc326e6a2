"""Ground truth of a run, written so detectors and analytics can be scored.

``manifest.json`` (run parameters, resolved config, counts), ``faults.parquet`` (every injected
fault) and ``hosts.parquet`` (each host's hidden traits). Same seed and config give the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from producers.errors import SinkError
from producers.fleet import DAY_MS, LEMON_SCOPE, MINUTE_MS, Fleet
from producers.jobs import JobTimeline
from producers.samples import episode_draws
from producers.schedule import Schedule

FAULTS_SCHEMA = pa.schema(
    [
        ("fault_id", pa.string()),
        ("host_id", pa.string()),
        ("cluster", pa.string()),
        ("fabric", pa.string()),
        ("gpu", pa.int32()),
        ("port", pa.int32()),
        ("kind", pa.string()),
        ("cause", pa.string()),
        ("ts", pa.int64()),
        ("host_age_days", pa.float64()),
        ("phase", pa.string()),
        ("interrupts_job", pa.bool_()),
    ]
)
HOSTS_SCHEMA = pa.schema(
    [
        ("host_id", pa.string()),
        ("cluster", pa.string()),
        ("fabric", pa.string()),
        ("rack", pa.string()),
        ("maintenance_domain", pa.string()),
        ("sku", pa.string()),
        ("install_ts", pa.int64()),
        ("job_id", pa.string()),
        ("lemon_kind", pa.string()),
        ("lemon_scope", pa.string()),
        ("lemon_gpu", pa.int32()),
        ("lemon_port", pa.int32()),
        ("lemon_onset_ts", pa.int64()),
        ("slow_cause", pa.string()),
        ("slow_factor", pa.float64()),
        ("slow_onset_ts", pa.int64()),
        ("slow_intermittent", pa.bool_()),
        ("slow_duty", pa.float64()),
        ("host_only", pa.bool_()),  # its faults' events name only the host (no GPU, port or bus id)
    ]
)


def _nullable(values: np.ndarray, missing: int | float) -> list[Any]:
    return [None if v == missing else v for v in values.tolist()]


def faults_table(fleet: Fleet, faults: Schedule, run_id: str) -> pa.Table:
    hosts = faults.host.tolist()
    fabrics = fleet.fabric
    host_ids = [fleet.host_id[h] for h in hosts]
    return pa.Table.from_pydict(
        {
            "fault_id": [f"{run_id}-f{i:07d}" for i in range(len(faults))],
            "host_id": host_ids,
            "cluster": [fleet.host_cluster(h) for h in hosts],
            "fabric": [fabrics[h] for h in hosts],
            "gpu": _nullable(faults.gpu, -1),
            "port": _nullable(faults.port, -1),
            "kind": faults.kind.tolist(),
            "cause": faults.cause.tolist(),
            "ts": faults.ts,
            "host_age_days": (faults.ts - fleet.install_ts[faults.host]) / DAY_MS,
            "phase": faults.phase.tolist(),
            "interrupts_job": faults.interrupts,
        },
        schema=FAULTS_SCHEMA,
    )


def hosts_table(fleet: Fleet) -> pa.Table:
    slow = fleet.slow_factor > 0
    return pa.Table.from_pydict(
        {
            "host_id": fleet.host_id,
            "cluster": [fleet.host_cluster(h) for h in range(fleet.n_hosts)],
            "fabric": fleet.fabric,
            "rack": fleet.rack,
            "maintenance_domain": fleet.domain,
            "sku": [fleet.config.sku] * fleet.n_hosts,
            "install_ts": fleet.install_ts,
            "job_id": [fleet.job_ids[j] for j in fleet.job.tolist()],
            "lemon_kind": fleet.lemon_kind,
            "lemon_scope": [LEMON_SCOPE[k] if k else None for k in fleet.lemon_kind],
            "lemon_gpu": _nullable(fleet.lemon_gpu, -1),
            "lemon_port": _nullable(fleet.lemon_port, -1),
            "lemon_onset_ts": _nullable(fleet.lemon_onset_ts, -1),
            "slow_cause": fleet.slow_cause,
            "slow_factor": [float(x) if s else None for x, s in zip(fleet.slow_factor, slow, strict=True)],
            "slow_onset_ts": _nullable(fleet.slow_onset_ts, -1),
            "slow_intermittent": fleet.slow_intermittent,
            "slow_duty": [float(x) if s else None for x, s in zip(fleet.slow_duty, slow, strict=True)],
            "host_only": fleet.host_only,
        },
        schema=HOSTS_SCHEMA,
    )


JOBS_SCHEMA = pa.schema(
    [
        ("job_id", pa.string()),
        ("slot", pa.string()),
        ("cluster", pa.string()),
        ("hosts", pa.int32()),
        ("start_ts", pa.int64()),
        ("end_ts", pa.int64()),
        ("pace", pa.float64()),
        ("bw_pace", pa.float64()),
    ]
)


def jobs_table(fleet: Fleet, jobs: JobTimeline) -> pa.Table:
    """Every job run touching the run: its slot (``hosts.parquet`` job_id), period and pace."""
    mine = np.flatnonzero((jobs.end_ts > fleet.start_ts) & (jobs.start_ts <= fleet.end_ts))
    slots = jobs.slot[mine]
    sizes = np.bincount(fleet.job, minlength=len(fleet.job_ids))
    first_host = np.searchsorted(fleet.job, np.arange(len(fleet.job_ids)))
    return pa.Table.from_pydict(
        {
            "job_id": [jobs.ids[r] for r in mine.tolist()],
            "slot": [fleet.job_ids[s] for s in slots.tolist()],
            "cluster": [fleet.host_cluster(int(first_host[s])) for s in slots.tolist()],
            "hosts": sizes[slots],
            "start_ts": jobs.start_ts[mine],
            "end_ts": jobs.end_ts[mine],
            "pace": jobs.pace[mine],
            "bw_pace": jobs.bw_pace[mine],
        },
        schema=JOBS_SCHEMA,
    )


EPISODES_SCHEMA = pa.schema([("host_id", pa.string()), ("start_ts", pa.int64()), ("end_ts", pa.int64())])


def episodes_table(fleet: Fleet) -> pa.Table:
    """When each slow host was slow within the run: from onset to the end, or its intermittent episodes."""
    rows: dict[str, list[Any]] = {"host_id": [], "start_ts": [], "end_ts": []}
    episode = int(fleet.config.slow.episode_minutes * MINUTE_MS)
    for h in np.flatnonzero(fleet.slow_factor > 0).tolist():
        lo = max(int(fleet.slow_onset_ts[h]), fleet.start_ts)
        if lo >= fleet.end_ts:
            continue
        spans = [(lo, fleet.end_ts)]
        if fleet.slow_intermittent[h]:
            blocks = np.arange(lo // episode, (fleet.end_ts - 1) // episode + 1, dtype=np.int64)
            on = blocks[episode_draws(fleet.seed, np.array([h]), blocks)[0] < fleet.slow_duty[h]]
            spans = [(max(lo, int(b) * episode), min(fleet.end_ts, (int(b) + 1) * episode)) for b in on]
        for a, b in spans:
            if rows["end_ts"] and rows["host_id"][-1] == fleet.host_id[h] and rows["end_ts"][-1] == a:
                rows["end_ts"][-1] = b  # consecutive slow episodes are one stretch
            else:
                rows["host_id"].append(fleet.host_id[h])
                rows["start_ts"].append(a)
                rows["end_ts"].append(b)
    return pa.Table.from_pydict(rows, schema=EPISODES_SCHEMA)


def write_truth(
    directory: Path,
    manifest: dict[str, Any],
    faults: pa.Table,
    hosts: pa.Table,
    agents: pa.Table | None = None,
    jobs: pa.Table | None = None,
    episodes: pa.Table | None = None,
) -> None:
    """Write the truth files (deterministic bytes: no wall-clock values, fixed key order).

    ``agents`` (each agent's last agent_seq) lets a later run continue this one; ``jobs`` lists
    the job runs (what a host's samples name as job_id, and each job's pace); ``episodes`` when
    each slow host was slow.
    """
    try:
        directory.mkdir(parents=True, exist_ok=True)
        pq.write_table(faults, directory / "faults.parquet", compression="zstd")
        pq.write_table(hosts, directory / "hosts.parquet", compression="zstd")
        if agents is not None:
            pq.write_table(agents, directory / "agents.parquet", compression="zstd")
        if jobs is not None:
            pq.write_table(jobs, directory / "jobs.parquet", compression="zstd")
        if episodes is not None:
            pq.write_table(episodes, directory / "slow_episodes.parquet", compression="zstd")
        (directory / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    except OSError as exc:
        raise SinkError(str(exc), sink="truth", target=str(directory)) from exc
