"""The twin's jobs on its hosts: placement, spares, and where each job's GPU-hours go.

Jobs are laid out per cluster on the hosts installed at the start (sizes from the fleet config,
largest first), after keeping ``spare_pct`` of the hosts aside. A job runs while it holds all its
hosts; a host leaving (drain, retirement) is replaced from the cluster's idle in-service hosts, or
the job waits for one. Losses are charged to (cause, maintenance domain) in GPU-hours.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from fleetpulse.twin import clock as jc
from fleetpulse.twin.clock import JobClock, JobSpec, Ledger
from fleetpulse.twin.settings import TwinSettings
from producers.fleet import Fleet

FLEET_WIDE = "-"  # losses no one domain caused (checkpoint saves)


@dataclass(slots=True)
class Job:
    job_id: str
    cluster: str
    spec: JobSpec
    hosts: list[int]
    clock: JobClock = field(default_factory=JobClock)
    ledger: Ledger = field(default_factory=Ledger)
    last_h: float = 0.0
    missing: int = 0  # hosts it lacks (waiting for capacity while > 0)
    missing_domain: str = FLEET_WIDE  # where the last host it lost was
    rate: float = 1.0
    slow_domain: str = FLEET_WIDE
    owed: tuple[str, str] = ("restarts", FLEET_WIDE)  # cause and domain the pending restart is charged to
    interruptions: int = 0


class JobBook:
    """Every job, the idle hosts per cluster, and the GPU-hours lost per (cause, domain)."""

    def __init__(self, jobs: list[Job], spares: dict[str, set[int]], gpus_per_host: int) -> None:
        self.jobs = jobs
        self.pool = spares  # in-service hosts in no job, per cluster
        self.gpus_per_host = gpus_per_host
        self.job_of: dict[int, int] = {h: j for j, job in enumerate(jobs) for h in job.hosts}
        self.lost: defaultdict[tuple[str, str], float] = defaultdict(float)

    def advance(self, j: int, t_h: float) -> None:
        job = self.jobs[j]
        dt = t_h - job.last_h
        if dt <= 0:
            return
        job.last_h = t_h
        g = job.spec.gpus
        if job.missing > 0 and not job.clock.finished:
            job.ledger = job.ledger.plus(Ledger(waiting=dt))
            # the hosts it still holds wait; the missing ones count where they are (out of service)
            held = max(g - job.missing * self.gpus_per_host, 0)
            self.lost["waiting", job.missing_domain] += dt * held
            return
        job.clock, spent = jc.advance(job.spec, job.clock, dt, job.rate)
        self._charge(job, spent)

    def set_rate(self, j: int, t_h: float, rate: float, domain: str) -> None:
        """The job's pace changes (a slow host joined, left or was cured) from ``t_h`` on."""
        self.advance(j, t_h)
        self.jobs[j].rate, self.jobs[j].slow_domain = rate, domain

    def pace_slowest(
        self, j: int, t_h: float, slowdown: Callable[[int], float], domain: Callable[[int], str]
    ) -> None:
        """A synchronous job runs at the pace of its slowest host (``slowdown``: 0 for a host at full pace)."""
        worst = max(self.jobs[j].hosts, key=slowdown, default=None)
        s = slowdown(worst) if worst is not None else 0.0
        self.set_rate(j, t_h, 1.0 / (1.0 + s), domain(worst) if worst is not None and s > 0 else "-")

    def _charge(self, job: Job, spent: Ledger) -> None:
        g = job.spec.gpus
        job.ledger = job.ledger.plus(spent)
        self.lost[job.owed] += spent.restart * g
        self.lost["slow_hosts", job.slow_domain] += spent.slow * g
        self.lost["checkpoints", FLEET_WIDE] += spent.save * g

    def interrupt(self, host: int, t_h: float, cause: str, domain: str) -> bool:
        """A fault on ``host`` stops its job (True) unless it holds no running job."""
        j = self.job_of.get(host)
        if j is None:
            return False
        job = self.jobs[j]
        self.advance(j, t_h)
        if job.missing > 0 or job.clock.finished:
            return False
        job.clock, lost = jc.interrupt(job.spec, job.clock)
        job.ledger = job.ledger.plus(lost)
        self.lost[cause, domain] += lost.failed * job.spec.gpus
        job.owed = ("deferrals" if cause == "deferrals" else "restarts", domain)
        job.interruptions += 1
        return True

    def leave(self, host: int, t_h: float, cluster: str, domain: str) -> int | None:
        """``host`` leaves service: its job stops cleanly and takes a spare, or waits. Returns the job index."""
        self.pool.get(cluster, set()).discard(host)
        j = self.job_of.pop(host, None)
        if j is None:
            return None
        job = self.jobs[j]
        self.advance(j, t_h)
        job.hosts.remove(host)
        if job.missing == 0 and not job.clock.finished:
            job.clock, kept = jc.stop_gracefully(job.spec, job.clock)
            self._charge(job, kept)
            job.owed = ("drains", domain)
            job.interruptions += 1
        spare = min(self.pool.get(cluster, set()), default=None)
        if spare is not None:
            self._assign(j, spare, cluster)
        else:
            job.missing += 1
            job.missing_domain = domain
        return j

    def back(self, host: int, t_h: float, cluster: str) -> int | None:
        """``host`` is back in service: to the first job of its cluster waiting for a host, else idle."""
        for j, job in enumerate(self.jobs):
            if job.cluster == cluster and job.missing > 0:
                self.advance(j, t_h)
                job.missing -= 1
                job.hosts.append(host)
                self.job_of[host] = j
                return j
        self.pool.setdefault(cluster, set()).add(host)
        return None

    def _assign(self, j: int, host: int, cluster: str) -> None:
        self.pool[cluster].discard(host)
        self.jobs[j].hosts.append(host)
        self.job_of[host] = j

    def settle(self) -> None:
        """A continued run starts here: hosts stay where they are, nothing is owed or counted yet."""
        self.lost.clear()
        for job in self.jobs:
            job.clock, job.ledger, job.interruptions = JobClock(), Ledger(), 0

    def finish(self, t_h: float) -> None:
        """Advance every job to the end of the horizon; work in flight counts as kept."""
        for j, job in enumerate(self.jobs):
            self.advance(j, t_h)
            self._charge(job, jc.close(job.clock))
            job.clock = JobClock(saved=job.clock.saved, finished=job.clock.finished)


def layout(
    clusters: list[tuple[str, list[int]]],
    sizes: list[int],
    spare_pct: float,
    spec_of: Callable[[int], JobSpec],
) -> tuple[list[Job], dict[str, set[int]]]:
    """Jobs over each cluster's hosts (sizes cycled, as the simulator's job slots), and the spares.

    ``spec_of`` gives a job's spec from its size in hosts.
    """
    jobs: list[Job] = []
    spares: dict[str, set[int]] = {}
    for name, hosts in clusters:
        n_spare = int(round(len(hosts) * spare_pct / 100.0))
        spares[name] = set(hosts[len(hosts) - n_spare :]) if n_spare else set()
        left = hosts[: len(hosts) - n_spare]
        k = 0
        while left:
            size = min(sizes[k % len(sizes)], len(left))
            jobs.append(Job(f"{name}-job{k:03d}", name, spec_of(size), left[:size]))
            left = left[size:]
            k += 1
    return jobs, spares


def job_spec(settings: TwinSettings, gpus: int) -> JobSpec:
    """A job of ``gpus`` GPUs with the settings' length and checkpoint/restart figures."""
    s = settings
    return JobSpec(
        gpus=gpus,
        length_h=s.length_h,
        interval_h=s.checkpoint_interval_h,
        save_h=s.checkpoint_save_min / 60.0,
        restart_h=s.restart_min / 60.0,
    )


def job_book(fleet: Fleet, settings: TwinSettings, in_service: list[bool]) -> JobBook:
    """The run's jobs over the hosts in service at its start, with the settings' job shape and spares."""
    per_host, s = fleet.config.gpus_per_host, settings

    def spec(size: int) -> JobSpec:
        return job_spec(s, size * per_host)

    clusters = [
        (c.name, [h for h in range(fleet.n_hosts) if fleet.cluster[h] == ci and in_service[h]])
        for ci, c in enumerate(fleet.config.clusters)
    ]
    jobs, spares = layout(clusters, fleet.config.jobs.sizes_hosts, s.spare_pct, spec)
    return JobBook(jobs, spares, per_host)
