"""The fleet at run time: hosts as numpy columns (cluster, rack, domain, install time, jobs)
plus each host's hidden traits (lemon, slow). Built once, deterministically, from config and seed.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from producers.config import FleetConfig
from producers.randomness import Purpose, stream

K = TypeVar("K", bound=str)
DAY_MS = 86_400_000
HOUR_MS = 3_600_000
MINUTE_MS = 60_000
LEMON_SCOPE = {"dram_uce": "gpu", "fell_off_bus": "gpu", "sram_uce": "gpu", "link_flap": "port"}


@dataclass(frozen=True, eq=False)
class Fleet:
    config: FleetConfig
    seed: int
    start_ts: int
    end_ts: int
    host_id: list[str]
    cluster: np.ndarray  # int index into config.clusters
    rack: list[str]
    domain: list[str]
    install_ts: np.ndarray  # int64 ms
    job: np.ndarray  # int index into job_ids
    job_ids: list[str]
    job_gpus: np.ndarray  # per job
    # hidden traits (ground truth)
    lemon_kind: list[str | None]
    lemon_gpu: np.ndarray  # -1: none
    lemon_port: np.ndarray  # -1: none
    lemon_onset_ts: np.ndarray  # -1: none
    slow_cause: list[str | None]
    slow_factor: np.ndarray  # 0: not slow
    slow_onset_ts: np.ndarray  # -1: not slow
    slow_intermittent: np.ndarray  # bool
    slow_duty: np.ndarray  # 1.0 unless intermittent
    slow_unit: np.ndarray  # GPU (pcie) or NIC port (nic) that shows the symptom
    job_spare: np.ndarray = field(
        default_factory=lambda: np.zeros(0, dtype=bool)
    )  # per slot: never runs a job
    segment: int = 0  # 0 for a fresh run; n for the n-th continuation of it (own random streams)
    origin_ts: int = 0  # start of segment 0: job timelines are laid out from here in every segment

    @property
    def n_hosts(self) -> int:
        return len(self.host_id)

    @functools.cached_property
    def host_only(self) -> np.ndarray:
        """Hosts whose faults are reported naming only the host (their own stream: other draws unchanged)."""
        share = self.config.failures.host_only_fraction
        if share <= 0:
            return np.zeros(self.n_hosts, dtype=bool)
        return stream(self.seed, Purpose.REPORTING).uniform(size=self.n_hosts) < share

    @property
    def cluster_names(self) -> list[str]:
        return [c.name for c in self.config.clusters]

    @property
    def fabric(self) -> list[str]:
        """Fabric of every host."""
        fabrics = [c.fabric for c in self.config.clusters]
        return [fabrics[i] for i in self.cluster]

    def streams(self, *index: int) -> tuple[int, ...]:
        """Stream indices for this run segment (a fresh run keeps the plain indices)."""
        return index if self.segment == 0 else (*index, 1000 + self.segment)

    def host_cluster(self, i: int) -> str:
        return self.config.clusters[int(self.cluster[i])].name


def _install_times(config: FleetConfig, n: int, start: int, end: int, rng: np.random.Generator) -> np.ndarray:
    """Install time of the hosts of one cluster: cohorts of contiguous racks, the newest during the run."""
    spec = config.install
    cohorts = np.array_split(np.arange(n), min(spec.cohorts_per_cluster, n))
    n_arriving = int(round(spec.arriving_fraction * len(cohorts)))
    n_old = len(cohorts) - n_arriving
    window_ms = (end - start) * spec.arrival_window
    out = np.empty(n, dtype=np.int64)
    for c, members in enumerate(cohorts):
        if c < n_old:
            at = start - spec.history_days * DAY_MS * (1 - c / max(n_old, 1))
            jitter = spec.jitter_hours * HOUR_MS
        else:
            slot = window_ms / n_arriving
            at = start + slot * (c - n_old)
            jitter = min(spec.jitter_hours * HOUR_MS, slot)
        out[members] = (at + rng.uniform(0, jitter, size=len(members))).astype(np.int64)
    return out


def _jobs(
    config: FleetConfig, cluster_sizes: list[int]
) -> tuple[np.ndarray, list[str], np.ndarray, np.ndarray]:
    """Per cluster: slots of ``sizes_hosts`` cycled, then ``small_share`` of its hosts in slots of
    ``small_sizes`` cycled, then ``spare_share`` in one spare slot that never runs a job (slot indices rise
    along the hosts). Returns (slot per host, slot ids, GPUs per slot, spare per slot)."""
    spec = config.jobs
    job_of_host: list[int] = []
    ids: list[str] = []
    gpus: list[int] = []
    spare: list[bool] = []
    for cluster, n in zip(config.clusters, cluster_sizes, strict=True):
        n_spare = int(round(spec.spare_share * n))
        n_small = min(int(round(spec.small_share * n)), n - n_spare)
        k = 0
        for left, sizes in ((n - n_spare - n_small, spec.sizes_hosts), (n_small, spec.small_sizes)):
            i = 0
            while left > 0:
                size = min(sizes[i % len(sizes)], left)
                job_of_host += [len(ids)] * size
                ids.append(f"{cluster.name}-job{k:03d}")
                gpus.append(size * config.gpus_per_host)
                spare.append(False)
                left -= size
                i += 1
                k += 1
        if n_spare:
            job_of_host += [len(ids)] * n_spare
            ids.append(f"{cluster.name}-spare")
            gpus.append(n_spare * config.gpus_per_host)
            spare.append(True)
    return (
        np.array(job_of_host, dtype=np.int64),
        ids,
        np.array(gpus, dtype=np.int64),
        np.array(spare, dtype=bool),
    )


def _pick(rng: np.random.Generator, weights: Mapping[K, float], size: int) -> list[K]:
    names = sorted(weights)
    p = np.array([weights[k] for k in names], dtype=float)
    return [names[i] for i in rng.choice(len(names), size=size, p=p / p.sum())]


def build_fleet(config: FleetConfig, seed: int, start_ts: int, end_ts: int) -> Fleet:
    """Lay out hosts, racks, domains, install cohorts, jobs, lemons and slow hosts."""
    rng = stream(seed, Purpose.FLEET)
    host_id: list[str] = []
    rack: list[str] = []
    domain: list[str] = []
    cluster_idx: list[np.ndarray] = []
    installs: list[np.ndarray] = []
    for ci, cluster in enumerate(config.clusters):
        idx = np.arange(cluster.hosts)
        racks = idx // config.hosts_per_rack
        domains = racks // config.racks_per_domain
        host_id += [f"{cluster.name}-h{i:05d}" for i in idx]
        rack += [f"{cluster.name}-rack{r:04d}" for r in racks]
        domain += [f"{cluster.name}-md{d:03d}" for d in domains]
        cluster_idx.append(np.full(cluster.hosts, ci, dtype=np.int64))
        installs.append(_install_times(config, cluster.hosts, start_ts, end_ts, rng))
    n = len(host_id)
    install_ts = np.concatenate(installs)
    job, job_ids, job_gpus, job_spare = _jobs(config, [c.hosts for c in config.clusters])
    duration = end_ts - start_ts

    # lemons
    n_lemons = int(round(config.lemons.fraction * n))
    lemon_hosts = (
        np.sort(rng.choice(n, size=n_lemons, replace=False)) if n_lemons else np.array([], dtype=int)
    )
    lemon_kind: list[str | None] = [None] * n
    lemon_gpu = np.full(n, -1, dtype=np.int64)
    lemon_port = np.full(n, -1, dtype=np.int64)
    lemon_onset = np.full(n, -1, dtype=np.int64)
    kinds = _pick(rng, config.lemons.kinds, n_lemons)
    units = rng.integers(0, config.gpus_per_host, size=n_lemons)
    onset_u = rng.uniform(0, 1, size=n_lemons)
    for h, kind, unit, u in zip(lemon_hosts, kinds, units, onset_u, strict=True):
        lemon_kind[h] = kind
        if LEMON_SCOPE[kind] == "gpu":
            lemon_gpu[h] = unit
        else:
            lemon_port[h] = unit
        lo = max(start_ts, int(install_ts[h]) + HOUR_MS)
        hi = max(lo, start_ts + int(duration * config.lemons.onset_window))
        lemon_onset[h] = int(lo + u * (hi - lo))

    # slow hosts (disjoint from lemons so each host has one story)
    candidates = np.setdiff1d(np.arange(n), lemon_hosts)
    n_slow = min(int(round(config.slow.fraction * n)), len(candidates))
    slow_hosts = (
        np.sort(rng.choice(candidates, size=n_slow, replace=False)) if n_slow else np.array([], dtype=int)
    )
    slow_cause: list[str | None] = [None] * n
    slow_factor = np.zeros(n)
    slow_onset = np.full(n, -1, dtype=np.int64)
    slow_intermittent = np.zeros(n, dtype=bool)
    slow_duty = np.ones(n)
    slow_unit = np.full(n, -1, dtype=np.int64)
    causes = _pick(rng, config.slow.causes, n_slow)
    lo_f, hi_f = config.slow.factor
    factors = rng.uniform(lo_f, hi_f, size=n_slow)
    at_start = rng.uniform(0, 1, size=n_slow) < config.slow.slow_at_start
    onset_u = rng.uniform(0, 1, size=n_slow)
    intermittent = rng.uniform(0, 1, size=n_slow) < config.slow.intermittent_fraction
    duty = rng.uniform(*config.slow.duty, size=n_slow)
    units = rng.integers(0, config.gpus_per_host, size=n_slow)
    factors = np.where(intermittent, rng.uniform(*config.slow.intermittent_factor, size=n_slow), factors)
    for j, h in enumerate(slow_hosts):
        slow_cause[h] = causes[j]
        slow_factor[h] = round(float(factors[j]), 4)
        lo = max(start_ts, int(install_ts[h]))
        hi = max(lo, start_ts + int(duration * config.slow.onset_window))
        slow_onset[h] = lo if at_start[j] else int(lo + onset_u[j] * (hi - lo))
        slow_intermittent[h] = bool(intermittent[j])
        slow_duty[h] = round(float(duty[j]), 4) if intermittent[j] else 1.0
        slow_unit[h] = units[j]

    return Fleet(
        config=config,
        seed=seed,
        start_ts=start_ts,
        end_ts=end_ts,
        host_id=host_id,
        cluster=np.concatenate(cluster_idx),
        rack=rack,
        domain=domain,
        install_ts=install_ts,
        job=job,
        job_ids=job_ids,
        job_gpus=job_gpus,
        job_spare=job_spare,
        lemon_kind=lemon_kind,
        lemon_gpu=lemon_gpu,
        lemon_port=lemon_port,
        lemon_onset_ts=lemon_onset,
        slow_cause=slow_cause,
        slow_factor=slow_factor,
        slow_onset_ts=slow_onset,
        slow_intermittent=slow_intermittent,
        slow_duty=slow_duty,
        slow_unit=slow_unit,
        origin_ts=start_ts,
    )
