"""What a twin run did to training: ETTR per job, fleet goodput, GPU-hours lost by cause and domain,
pages, and the detectors' precision and recall against the twin's own truth. Pure over a ``TwinRun``.

Truth here is the twin's hidden traits (lemons, slow hosts), fixed by the seed and never by the
policy: a finding is right when its host is a lemon or a slow host; a lemon or slow host is found
when any finding names it. Lemon recall counts the lemons ``fleetpulse score`` would require, the
material ones (``fleetpulse.evaluation.lemon_truth``), judged on the faults they would have had untreated. Pages are counted as ``fleetpulse.evaluation.pages`` counts them: one per
(host, alert group) of the firing alerts the actions raise (``streams.alerts``), per true incident found
(``fleetpulse.evaluation.incidents``: a true host's fault, and each return from a repair that did not cure
it that a finding followed).
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from typing import Any

import numpy as np
import polars as pl

from fleetpulse.evaluation.incidents import found_incidents, pages_per_incident
from fleetpulse.evaluation.lemon_truth import LemonMateriality, material_lemons
from fleetpulse.twin import goodput
from fleetpulse.twin.engine import TwinRun
from producers.truth import faults_table, hosts_table
from streams.alerts import alerts_for

CAUSES = goodput.CAUSES


def losses(run: TwinRun) -> defaultdict[tuple[str, str], float]:
    """GPU-hours lost per (cause, domain): the jobs' losses plus the hosts out of service."""
    per_host = run.fleet.config.gpus_per_host
    return goodput.total_losses(run.book, {key: hours * per_host for key, hours in run.out_h.items()})


def available_gpu_h(run: TwinRun) -> float:
    f = run.fleet
    return goodput.available_gpu_h(f, f.start_ts, f.start_ts + round(run.horizon_h * goodput.HOUR_MS))


def lemons_to_find(run: TwinRun, materiality: LemonMateriality | None = None) -> set[str]:
    """The lemons whose faults, as the twin's schedule has them untreated, make them material in the run:
    the same lemons for every policy (a lemon cured or drained early still had to be found)."""
    f = run.fleet
    lemons = [h for h, kind in enumerate(f.lemon_kind) if kind is not None]
    own = run.faults.take(np.flatnonzero(np.isin(run.faults.host, lemons)))
    hosts, faults = pl.from_arrow(hosts_table(f)), pl.from_arrow(faults_table(f, own, "twin"))
    assert isinstance(hosts, pl.DataFrame) and isinstance(faults, pl.DataFrame)
    return set(material_lemons(hosts, faults, f.start_ts, f.end_ts, materiality))


def pages(run: TwinRun) -> dict[tuple[str, str], int]:
    """Firing alerts on hosts, one page per (host, group key): -> the time the group first fired."""
    out: dict[tuple[str, str], int] = {}
    for action in run.actions:
        for alert in alerts_for(action):
            p = alert["payload"]
            if p["status"] == "firing" and alert["host_id"] != "-":
                key = (alert["host_id"], p["labels"].get("group_key") or p["alert_id"])
                out[key] = min(out.get(key, alert["ts"]), alert["ts"])
    return out


def summary(run: TwinRun) -> dict[str, Any]:
    """The run's figures as plain values (floats rounded: the same run prints the same bytes)."""
    f = run.fleet
    jobs = goodput.figures(run.book.jobs, losses(run), available_gpu_h(run))
    ettr_by_job = jobs.pop("ettr_by_job")
    planted = {
        f.host_id[h] for h, k in enumerate(f.lemon_kind) if k is not None and f.lemon_onset_ts[h] < f.end_ts
    }
    lemons = lemons_to_find(run)  # recall's denominator: the material ones
    # slow_cause, not slow_factor: the twin zeroes a cured host's factor, the truth stays
    slow = {f.host_id[h] for h in range(f.n_hosts) if f.slow_cause[h] and f.slow_onset_ts[h] < f.end_ts}
    per_host = Counter(x.host_id for x in run.findings)
    true_findings = sum(n for h, n in per_host.items() if h in planted | slow)
    found = sorted(h for h in planted if per_host[h])
    true_found = set(found) | {h for h in slow if per_host[h]}  # every true host a detector found
    incidents = found_incidents(true_found, ((x.host_id, x.ts) for x in run.findings), run.relapses)
    groups = pages(run)
    mine = ((host, ts) for (host, _), ts in groups.items() if host in incidents)
    on_incidents = sum(pages_per_incident(mine, incidents, run.relapses).values())
    n_incidents = sum(len(v) for v in incidents.values())
    kinds = Counter(a.kind for a in run.actions)
    return {
        **jobs,
        "interruptions": run.interruptions,
        "faults_reported": run.faults_seen,
        "faults_masked": run.faults_masked,
        "findings": len(run.findings),
        "precision": round(true_findings / len(run.findings), 6) if run.findings else None,
        "lemons": len(lemons),
        "lemons_found": len(lemons & set(found)),
        "lemon_recall": round(len(lemons & set(found)) / len(lemons), 6) if lemons else None,
        "lemons_planted": len(planted),
        "lemons_planted_found": len(found),
        "lemons_cured": len(run.lemon_cured_ts),
        "findings_per_lemon_median": statistics.median(per_host[h] for h in found) if found else None,
        "findings_per_lemon_max": max((per_host[h] for h in found), default=None),
        "pages": len(groups),
        "pages_per_true_incident": round(on_incidents / n_incidents, 6) if n_incidents else None,
        "incidents": n_incidents,
        "pages_per_host": round(on_incidents / len(true_found), 6) if true_found else None,  # the old figure
        "slow_hosts": len(slow),
        "slow_hosts_found": len(true_found) - len(found),
        "rmas": kinds["rma_opened"],
        "escalations": kinds["escalated"],
        "retired": kinds["retired"],
        "drains": kinds["drain_requested"],
        "deferrals": kinds["deferred"],
        "late_returns": run.late_returns,
        "ettr_by_job": ettr_by_job,
    }
