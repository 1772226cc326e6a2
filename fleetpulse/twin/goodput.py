"""ETTR per job, fleet goodput and GPU-hours lost by cause and domain: one set of figures for every run.

The in-process twin (``outcome.summary``) and the live closed loop (``live_goodput``) both end with a
``JobBook`` and the GPU-hours hosts spent out of service; ``figures`` turns them into the same keys.
``replay`` drives a fresh book over a recorded history in event-time order, through the ``Pacer`` the
twin itself runs on: one set of rules for both.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from fleetpulse.twin.jobs import FLEET_WIDE, Job, JobBook
from fleetpulse.twin.pacing import HOUR_MS, INTERRUPT, Pacer, Step
from producers.fleet import Fleet

CAUSES = ("failures", "deferrals", "restarts", "slow_hosts", "checkpoints", "drains", "retired", "waiting")


def available_gpu_h(fleet: Fleet, start_ts: int, end_ts: int) -> float:
    """GPU-hours the fleet's hosts existed from ``start_ts`` to ``end_ts`` (a host installed later: from then)."""
    horizon_h = (end_ts - start_ts) / HOUR_MS
    hours = sum(
        max(0.0, horizon_h - max(0, int(fleet.install_ts[h]) - start_ts) / HOUR_MS)
        for h in range(fleet.n_hosts)
    )
    return hours * fleet.config.gpus_per_host


def replay(
    fleet: Fleet, book: JobBook, slowdown: list[float], start_ts: int, end_ts: int, steps: Iterable[Step]
) -> int:
    """Drive ``book`` over ``steps`` in (event time, order) up to ``end_ts``; returns the jobs interrupted.

    Steps before ``start_ts`` (a continued run's earlier segments) only put the hosts where they are.
    """
    pacer = Pacer(fleet, book, slowdown, start_ts)
    stopped = 0
    ordered = sorted(s for s in steps if s.ts <= end_ts)
    for step in (s for s in ordered if s.ts < start_ts and s.kind != INTERRUPT):
        pacer.apply(step)
    book.settle()
    for step in (s for s in ordered if s.ts >= start_ts):
        if step.kind == INTERRUPT:
            stopped += pacer.interrupt(step.host, step.ts, step.cause)
        else:
            pacer.apply(step)
    pacer.finish(end_ts)
    return stopped


def total_losses(
    book: JobBook, out_gpu_h: Mapping[tuple[str, str], float]
) -> defaultdict[tuple[str, str], float]:
    """GPU-hours lost per (cause, domain): the jobs' losses plus the hosts' time out of service."""
    out: defaultdict[tuple[str, str], float] = defaultdict(float, book.lost)
    for key, gpu_h in out_gpu_h.items():
        out[key] += gpu_h
    return out


def figures(jobs: list[Job], lost: Mapping[tuple[str, str], float], available: float) -> dict[str, Any]:
    """The jobs' figures as plain values (floats rounded: the same run prints the same bytes).

    ``lost_gpu_h`` lists every cause of ``CAUSES``, then any other (a live fleet's ``repairs``, ``operators``).
    """
    ettr = {j.job_id: j.ledger.useful / j.ledger.wall for j in jobs if j.ledger.wall > 0}
    gpus = {j.job_id: j.spec.gpus for j in jobs}
    useful = sum(j.ledger.useful * j.spec.gpus for j in jobs)
    causes = list(CAUSES) + sorted({c for c, _ in lost} - set(CAUSES))
    by_cause = {c: sum(v for (k, _), v in lost.items() if k == c) for c in causes}
    by_domain: dict[str, dict[str, float]] = {}
    for (cause, domain), v in sorted(lost.items()):
        if domain != FLEET_WIDE and v > 0:
            by_domain.setdefault(domain, {})[cause] = round(v, 3)
    w = sum(gpus[j] for j in ettr)
    return {
        "jobs": len(jobs),
        "ettr_mean": round(statistics.fmean(ettr.values()), 6) if ettr else None,
        "ettr_gpu_weighted": round(sum(ettr[j] * gpus[j] for j in ettr) / w, 6) if w else None,
        "ettr_min": round(min(ettr.values()), 6) if ettr else None,
        "goodput": round(useful / available, 6) if available else None,
        "useful_gpu_h": round(useful, 3),
        "available_gpu_h": round(available, 3),
        "lost_gpu_h": {c: round(v, 3) for c, v in by_cause.items()},
        "idle_gpu_h": round(available - useful - sum(by_cause.values()), 3),
        "lost_by_domain": by_domain,
        "ettr_by_job": {k: round(v, 6) for k, v in sorted(ettr.items())},
    }
