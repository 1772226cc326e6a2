"""The live closed loop's jobs and goodput, replayed from what the run did to its hosts.

The live fleet is the simulator and the planner another process, so no ``JobBook`` runs alongside
them. At the end of the run its history is replayed (``goodput.replay``): the interruptions the agents
actually sent (the emitted faults that stop a job), each host's times out of and back in service
(``FleetResponse.history``), the slow hosts' onsets and cures, and the hosts installed during the run.

A continued run (``--continue-from``) is counted over its own segment: hosts out before it start
out of their jobs (nothing owed for it), and only the time out of service within the segment counts.

Jobs are the simulator's job slots (``Fleet.job``: the slots its samples name), each from the time
its last host is installed; its spare slots are the spares. An interruption is a ``deferrals`` loss while the
host's last action is ``deferred`` (its repair is waiting), else a ``failures`` loss.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fleetpulse.twin import goodput
from fleetpulse.twin.jobs import Job, JobBook, job_spec
from fleetpulse.twin.pacing import BACK, CURED, HOUR_MS, INTERRUPT, LEAVE, SLOW, Step
from fleetpulse.twin.response import FleetResponse
from fleetpulse.twin.settings import TwinSettings
from producers.fleet import Fleet
from producers.schedule import Schedule

MOVES = {"out": LEAVE, "back": BACK}


def spare(fleet: Fleet, h: int) -> bool:
    """``h`` is in one of the simulator's spare slots (it never runs a job of its own)."""
    s = int(fleet.job[h])
    return s < len(fleet.job_spare) and bool(fleet.job_spare[s])


def slot_book(fleet: Fleet, settings: TwinSettings, start_ts: int) -> JobBook:
    """One job per simulator slot, started once its last host is installed; spare slots' hosts are the spares.

    A spare installed after ``start_ts`` joins the spares then (a ``BACK`` step of the history).
    """
    members: dict[int, list[int]] = {}
    for h in range(fleet.n_hosts):
        members.setdefault(int(fleet.job[h]), []).append(h)
    per_host = fleet.config.gpus_per_host
    jobs: list[Job] = []
    spares: dict[str, set[int]] = {}
    for s, hosts in sorted(members.items()):
        cluster = fleet.host_cluster(hosts[0])
        if spare(fleet, hosts[0]):
            spares.setdefault(cluster, set()).update(h for h in hosts if int(fleet.install_ts[h]) <= start_ts)
            continue
        spec = job_spec(settings, len(hosts) * per_host)
        begins_h = max(0, max(int(fleet.install_ts[h]) for h in hosts) - start_ts) / HOUR_MS
        jobs.append(Job(fleet.job_ids[s], cluster, spec, hosts, last_h=begins_h))
    return JobBook(jobs, spares, per_host)


def _deferred(history: Iterable[tuple[int, int, str]]) -> dict[int, list[tuple[int, int]]]:
    """Per host, the spans from a ``deferred`` action to the host's next action or move."""
    spans: dict[int, list[tuple[int, int]]] = {}
    since: dict[int, int] = {}
    for ts, h, what in sorted(history):
        if what == "deferred":
            since.setdefault(h, ts)
        elif h in since:
            spans.setdefault(h, []).append((since.pop(h), ts))
    for h, ts in since.items():
        spans.setdefault(h, []).append((ts, 2**62))
    return spans


def live_steps(
    fleet: Fleet, response: FleetResponse, slowdown: list[float], sent: Schedule, start_ts: int, end_ts: int
) -> list[Step]:
    """The run's history as steps: at one instant, hosts move and slow first, then faults interrupt."""
    rows: list[tuple[int, int, str, int, str]] = []  # ts, rank, kind, host, cause
    for ts, h, what in response.history:
        if what in MOVES:
            rows.append((ts, 0, MOVES[what], h, ""))
    for h in range(fleet.n_hosts):
        if start_ts < int(fleet.install_ts[h]) <= end_ts and spare(fleet, h):
            rows.append((int(fleet.install_ts[h]), 0, BACK, h, ""))
        if slowdown[h] > 0:
            rows.append((max(int(fleet.slow_onset_ts[h]), start_ts), 0, SLOW, h, ""))
    rows += [(ts, 0, CURED, h, "") for h, ts in response.slow_cured.items()]
    deferred = _deferred(response.history)
    stops = sent.interrupts & sent.is_fault
    for ts, h in zip(sent.ts[stops].tolist(), sent.host[stops].tolist(), strict=True):
        late = any(a <= ts < b for a, b in deferred.get(h, ()))
        rows.append((ts, 1, INTERRUPT, h, "deferrals" if late else "failures"))
    return [Step(ts, i, kind, h, cause) for i, (ts, _, kind, h, cause) in enumerate(sorted(rows))]


def out_of_service(
    fleet: Fleet, response: FleetResponse, start_ts: int, end_ts: int
) -> dict[tuple[str, str], float]:
    """GPU-hours out of service per (cause, domain) between ``start_ts`` and ``end_ts``."""
    spans = list(response.spans) + [(h, s, end_ts, response.cause[h]) for h, s in response.out_since.items()]
    out: dict[tuple[str, str], float] = {}
    for h, since, until, cause in spans:
        hours = max(0, min(until, end_ts) - max(since, start_ts)) / HOUR_MS
        key = (cause, fleet.domain[h])
        out[key] = out.get(key, 0.0) + hours * fleet.config.gpus_per_host
    return out


def live_goodput(
    fleet: Fleet,
    settings: TwinSettings,
    response: FleetResponse,
    slowdown: list[float],
    sent: Schedule,
    end_ts: int,
) -> dict[str, Any]:
    """ETTR per job, goodput and GPU-hours lost by cause and domain of a live run up to ``end_ts``.

    ``slowdown``: each host's mean slowdown once slow, taken before any cure zeroed the fleet's factors.
    """
    start = fleet.start_ts
    book = slot_book(fleet, settings, start)
    steps = live_steps(fleet, response, slowdown, sent, start, end_ts)
    stopped = goodput.replay(fleet, book, slowdown, start, end_ts, steps)
    lost = goodput.total_losses(book, out_of_service(fleet, response, start, end_ts))
    return {
        **goodput.figures(book.jobs, lost, goodput.available_gpu_h(fleet, start, end_ts)),
        "interruptions": stopped,
    }
