"""The closed loop: a simulated fleet whose hosts answer the real detectors' and planner's actions.

Fast-forward and in process. The fleet, its random faults and its lemons come from ``producers``
(the same streams as a simulated run); every fault a host in service suffers goes, as its agent's
records, through ``streams.core.DetectionCore`` (the live classifier, repeat-offender rules, sample
folding and planner): the twin is one more runner of the detection core. The planner's actions come back: a drained host runs no job and reports no fault, a repair
cures the persistent fault with the twin's probability for that operation (else leaves it), takes a
lognormal time per operation, and the host returns only with its ``returned`` action (or when the
repair is physically done, if later); a retired host never returns. Deterministic for seed + policy.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, replace

import numpy as np

from fleetpulse.twin.jobs import JobBook, job_book
from fleetpulse.twin.pacing import Pacer, Step
from fleetpulse.twin.records import Envelopes
from fleetpulse.twin.repairs import draw_repair
from fleetpulse.twin.sampling import sample_records
from fleetpulse.twin.settings import TwinSettings
from producers.config import FleetConfig
from producers.fault_process import calibrate, fault_schedule
from producers.fleet import Fleet, build_fleet
from producers.samples import SampleModel
from producers.schedule import Schedule
from streams.core import DetectionCore
from streams.core.actions import REQUEST_KINDS, RETIRED, Action
from streams.core.findings import Finding
from streams.core.inventory import Inventory
from streams.core.policy import Policy

HOUR_MS = 3_600_000
REPAIR_DONE, SLOW_ONSET, SAMPLE = "repair_done", "slow_onset", "sample"


@dataclass(frozen=True, slots=True)
class TwinRun:
    """What one seed and one policy did: the raw material of ``fleetpulse.twin.outcome``."""

    fleet: Fleet
    book: JobBook
    findings: list[Finding]
    actions: list[Action]  # the planner's and retirement's, in the order they were decided
    horizon_h: float
    out_h: dict[tuple[str, str], float]  # (cause, domain) -> host-hours out of service
    faults_seen: int  # faults hosts in service reported
    faults_masked: int  # faults of hosts out of service or of cured parts (never reported)
    lemon_cured_ts: dict[str, int]  # lemon host -> when its part was cured
    late_returns: int  # `returned` before the repair was physically done
    interruptions: int  # jobs stopped by a fault (unexpected interruptions)
    faults: Schedule  # every fault the fleet would suffer untreated: the truth, whatever the policy did
    history: list[Step]  # what moved the jobs, in order (``goodput.replay`` plays it again)
    slowdown: list[float]  # each host's mean slowdown once slow, as at the start (cures zero it)
    # host -> when it came back to service from a repair that did not cure its fault (a new incident:
    # ``fleetpulse.evaluation.incidents``, as ``FleetResponse`` records them for the broker's fleet)
    relapses: dict[str, list[int]]


class Twin:
    """One closed-loop run (``run``); state in plain lists and dicts, host index as the key."""

    def __init__(
        self,
        config: FleetConfig,
        policy: Policy,
        settings: TwinSettings,
        *,
        seed: int,
        start_ts: int,
        days: float,
    ) -> None:
        lemons = config.lemons.model_copy(update={"max_repeats": settings.lemon_max_repeats})
        config = config.model_copy(update={"lemons": lemons})
        self.end_ts = start_ts + int(days * 24 * HOUR_MS)
        self.start_ts, self.seed, self.settings = start_ts, seed, settings
        f = build_fleet(config, seed, start_ts, self.end_ts)
        self.fleet = f = replace(f, slow_factor=f.slow_factor.copy())  # a cured slow host's own copy
        self.faults, _ = fault_schedule(f, calibrate(f))
        self.env = Envelopes(f, f"twin-{seed}")
        hosts = Inventory()
        for h in range(f.n_hosts):
            hosts.apply(self.env.inventory(h))
        self.core = DetectionCore(policy, hosts, plan_order="arrival")
        n = f.n_hosts
        self.in_service = [bool(f.install_ts[h] <= start_ts) for h in range(n)]
        self.retired = [False] * n
        self.out_since: list[float | None] = [None] * n
        self.out_cause = ["drains"] * n
        self.repair_done: list[int] = [0] * n
        self.repairs = [0] * n
        self.lemon = [k is not None for k in f.lemon_kind]
        self.slowdown = [float(f.slow_factor[h] * f.slow_duty[h]) for h in range(n)]  # mean, once on
        self.index = {host_id: h for h, host_id in enumerate(f.host_id)}
        self.events: list[tuple[int, int, str, int]] = []
        self._seq = 0
        for h in np.flatnonzero(f.slow_factor > 0).tolist():
            self._later(max(int(f.slow_onset_ts[h]), start_ts), SLOW_ONSET, h)
        for h in np.flatnonzero(f.install_ts > start_ts).tolist():
            self._later(int(f.install_ts[h]), REPAIR_DONE, h)  # a host installed during the run joins then
        self.sample_ms = int(settings.sample_interval_min * 60_000)
        self.samples = SampleModel(f) if self.sample_ms else None
        if self.sample_ms:
            self._later(start_ts + self.sample_ms, SAMPLE, 0)
        self.jobs = Pacer(f, job_book(f, settings, self.in_service), self.slowdown, start_ts)
        self.book: JobBook = self.jobs.book
        self.actions: list[Action] = []
        self.seen = 0
        self.out_h: dict[tuple[str, str], float] = {}
        self.faults_seen = self.faults_masked = self.late_returns = self.interruptions = 0
        self.cured: dict[str, int] = {}
        self.failing: set[int] = set()  # out after a repair that did not cure its fault, not yet back
        self.relapses: dict[str, list[int]] = {}

    # -- time ----------------------------------------------------------------------------------

    def _h(self, ts: int) -> float:
        return (ts - self.start_ts) / HOUR_MS

    def _later(self, ts: int, kind: str, host: int) -> None:
        self._seq += 1
        heapq.heappush(self.events, (ts, self._seq, kind, host))

    def run(self) -> TwinRun:
        o = self.faults
        for j in range(len(o)):
            ts = int(o.ts[j])
            if ts > self.end_ts:
                break
            self._until(ts)
            self._fault(j, ts)
        self._until(self.end_ts)
        end_h = self._h(self.end_ts)
        for h in range(self.fleet.n_hosts):
            if self.out_since[h] is not None:
                self._count_out(h, end_h)
        self.jobs.finish(self.end_ts)
        return TwinRun(
            fleet=self.fleet,
            book=self.book,
            findings=list(self.core.findings),
            actions=self.actions,
            horizon_h=end_h,
            out_h=self.out_h,
            faults_seen=self.faults_seen,
            faults_masked=self.faults_masked,
            lemon_cured_ts=self.cured,
            late_returns=self.late_returns,
            interruptions=self.interruptions,
            faults=self.faults,
            history=self.jobs.steps,
            slowdown=self.slowdown,
            relapses=self.relapses,
        )

    def _until(self, ts: int) -> None:
        """Everything due by ``ts``: the twin's own events and the planner's decisions, in time order."""
        while self.events and self.events[0][0] <= ts:
            at, _, kind, h = heapq.heappop(self.events)
            self._plan_until(at)
            if kind == SAMPLE:
                self._sample(at, h)
            elif kind == SLOW_ONSET:
                self.jobs.slow_onset(h, at)
            elif self._may_return(h, at):
                self._back(h, at)
        self._plan_until(ts)

    def _may_return(self, h: int, at: int) -> bool:
        """A repair physically done after its ``returned``, or a host installed during the run."""
        out = not self.retired[h] and not self.in_service[h] and self.repair_done[h] <= at
        return out and (self.out_since[h] is not None or int(self.fleet.install_ts[h]) == at)

    def _plan_until(self, ts: int) -> None:
        self.core.advance(ts)
        self._take_actions()

    def _take_actions(self) -> None:
        new = self.core.actions[self.seen :]
        self.seen = len(self.core.actions)
        for a in sorted(new, key=lambda a: a.ts):  # stable: the planner's order within one instant
            self._act(a)  # a retirement comes from the core right after its escalation

    # -- the fleet's side ----------------------------------------------------------------------

    def _fault(self, j: int, ts: int) -> None:
        o, f = self.faults, self.fleet
        h = int(o.host[j])
        lemon_fault = o.phase[j] == "lemon"
        if not self.in_service[h] or self.retired[h] or (lemon_fault and not self.lemon[h]):
            self.faults_masked += 1
            return
        self.faults_seen += 1
        job = self.book.job_of.get(h)
        name = self.book.jobs[job].job_id if job is not None else f"{f.host_cluster(h)}-idle"
        gpus = self.book.jobs[job].spec.gpus if job is not None else f.config.gpus_per_host
        kind = str(o.kind[j])
        records = self.env.fault(
            h,
            ts,
            kind,
            str(o.cause[j]),
            int(o.gpu[j]),
            int(o.port[j]),
            (int(o.aux1[j]), int(o.aux2[j])),
            name,
            gpus,
        )
        if bool(o.interrupts[j]):
            cause = "deferrals" if self._deferred(h) else "failures"
            self.interruptions += self.jobs.interrupt(h, ts, cause)
        for record in records:
            self.core.step(record)
            self._take_actions()

    def _deferred(self, h: int) -> bool:
        """The planner knows this host is bad and its repair is waiting (deferred or queued)."""
        host = self.core.fleet.hosts.get(self.fleet.host_id[h])
        return host is not None and host.current is None and bool(host.waiting)

    def _act(self, a: Action) -> None:
        self.actions.append(a)
        h = self.index.get(a.host_id)
        if h is None or self.retired[h]:
            return
        if a.kind == "drain_requested" and self.in_service[h]:
            self._leave(h, a.ts, "drains")
        elif a.kind in REQUEST_KINDS:
            self._repair(h, a)
        elif a.kind == "returned" and not self.in_service[h]:
            if self.repair_done[h] > a.ts:
                self.late_returns += 1
                self._later(self.repair_done[h], REPAIR_DONE, h)
            else:
                self._back(h, a.ts)
        elif a.kind == RETIRED:
            if self.in_service[h]:
                self._leave(h, a.ts, "retired")
            else:
                self.out_cause[h] = "retired"
            self.retired[h] = True

    def _leave(self, h: int, ts: int, cause: str) -> None:
        self.in_service[h] = False
        self.out_since[h], self.out_cause[h] = self._h(ts), cause
        self.jobs.leave(h, ts)

    def _back(self, h: int, ts: int) -> None:
        if self.out_since[h] is not None:
            self._count_out(h, self._h(ts))
        self.in_service[h] = True
        self.jobs.back(h, ts)
        if h in self.failing:  # back, and still faulty: operators must hear the repair failed
            self.failing.discard(h)
            self.relapses.setdefault(self.fleet.host_id[h], []).append(ts)

    def _count_out(self, h: int, t_h: float) -> None:
        since = self.out_since[h]
        assert since is not None
        key = (self.out_cause[h], self.fleet.domain[h])
        self.out_h[key] = self.out_h.get(key, 0.0) + (t_h - since)
        self.out_since[h] = None

    def _repair(self, h: int, a: Action) -> None:
        """A repair starts: it cures the host's persistent fault or not, and takes its time."""
        f = self.fleet
        self.repairs[h] += 1
        fault = f.lemon_kind[h] if self.lemon[h] else (f.slow_cause[h] if self.jobs.slow[h] > 0 else None)
        draw = draw_repair(self.settings, self.seed, h, self.repairs[h], a.operation, fault)
        if fault is not None and not draw.cured and (not self.lemon[h] or f.lemon_onset_ts[h] <= a.ts):
            self.failing.add(h)  # a lemon's fault counts from its onset, as the broker's fleet has it
        elif draw.cured:
            self.failing.discard(h)  # a later repair in the same stay out cured it
            if self.lemon[h]:
                self.lemon[h] = False
                self.cured[f.host_id[h]] = a.ts
            else:
                self.jobs.cured(h, a.ts)  # the job pace changes when the host comes back
                self.fleet.slow_factor[h] = 0.0  # and its samples are no longer slow
        self.repair_done[h] = a.ts + int(draw.hours * HOUR_MS)

    def _sample(self, ts: int, tick: int) -> None:
        """Every host in service sends one HostSampled (a drained or retired host none: it runs no job)."""
        assert self.samples is not None
        f = self.fleet
        hosts = np.array(
            [h for h in range(f.n_hosts) if self.in_service[h] and not self.retired[h]], dtype=np.int64
        )
        if len(hosts):
            for record in sample_records(self.env, self.samples, ts, self.sample_ms, hosts, tick):
                self.core.step(record)
            self._take_actions()
        if ts + self.sample_ms <= self.end_ts:
            self._later(ts + self.sample_ms, SAMPLE, tick + 1)


def run_twin(
    config: FleetConfig, policy: Policy, settings: TwinSettings, *, seed: int, start_ts: int, days: float
) -> TwinRun:
    """One closed-loop run: pure over its inputs (same seed and policy, same run)."""
    return Twin(config, policy, settings, seed=seed, start_ts=start_ts, days=days).run()
