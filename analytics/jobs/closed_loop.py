"""The report's closed-loop section: what the simulated fleet did in answer to the planner.

Read from the run's truth manifest (its ``closed_loop`` section, written by ``fleetpulse loop``): repairs,
repairs that did not hold, cures, retirements, the GPU-hours hosts spent out of service by cause and
by maintenance domain, and what that did to training (its ``jobs``: ETTR per job, fleet goodput, GPU-hours
lost by cause and domain). An open-loop run has no such section, and the report shows none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import polars as pl

CAUSE_ORDER = ("drains", "repairs", "retired")  # the answer's causes; any other follows in name order
# what training lost, in the order the twin lists it (fleetpulse/twin/goodput.py CAUSES), then the answer's
LOST_ORDER = ("failures", "deferrals", "restarts", "slow_hosts", "checkpoints", "waiting", *CAUSE_ORDER)


class ClosedLoop(NamedTuple):
    lines: list[str]
    by_cause: pl.DataFrame  # cause, gpu_h
    by_domain: pl.DataFrame  # maintenance_domain, one GPU-hours column per cause, total_gpu_h
    hosts: pl.DataFrame  # host_id, what (lemon cured, slow host cured, retired, out at end), ts
    lost: pl.DataFrame  # cause, gpu_h: what training lost (empty when the manifest has no jobs)
    lost_by_domain: pl.DataFrame  # maintenance_domain, one GPU-hours column per cause, total_gpu_h
    ettr: pl.DataFrame  # job_id, ettr


def _ordered(names: set[str], order: tuple[str, ...]) -> list[str]:
    return [c for c in order if c in names] + sorted(names - set(order))


def _causes(names: set[str]) -> list[str]:
    return _ordered(names, CAUSE_ORDER)


def _hosts(answer: Mapping[str, Any]) -> pl.DataFrame:
    rows = [(h, "lemon cured", ts) for h, ts in (answer.get("lemons_cured") or {}).items()]
    rows += [(h, "slow host cured", ts) for h, ts in (answer.get("slow_hosts_cured") or {}).items()]
    rows += [(h, "retired", None) for h in answer.get("retired") or []]
    rows += [(h, "out of service at the end", None) for h in answer.get("out_of_service_at_end") or []]
    rows += [(h, "held by operators at the end", None) for h in answer.get("held_by_operators_at_end") or []]
    schema = {"host_id": pl.String, "what": pl.String, "cured_ts": pl.Int64}
    return pl.DataFrame(rows, schema=schema, orient="row").sort("host_id", "what")


def _by_domain(answer: Mapping[str, Any]) -> pl.DataFrame:
    """``gpu_h_out_by_domain`` is keyed ``cause/domain``: one row per domain, one column per cause."""
    cells: dict[str, dict[str, float]] = {}
    for key, gpu_h in (answer.get("gpu_h_out_by_domain") or {}).items():
        cause, _, domain = str(key).partition("/")
        cells.setdefault(domain, {})[cause] = float(gpu_h)
    return _domain_table(cells, CAUSE_ORDER)


def _domain_table(cells: Mapping[str, Mapping[str, float]], order: tuple[str, ...]) -> pl.DataFrame:
    causes = _ordered({c for row in cells.values() for c in row}, order)
    rows = [
        {
            "maintenance_domain": d,
            **{f"{c}_gpu_h": row.get(c, 0.0) for c in causes},
            "total_gpu_h": sum(row.values()),
        }
        for d, row in cells.items()
    ]
    if not rows:
        return pl.DataFrame(schema={"maintenance_domain": pl.String, "total_gpu_h": pl.Float64})
    return pl.DataFrame(rows).sort(["total_gpu_h", "maintenance_domain"], descending=[True, False])


def closed_loop(manifest: Mapping[str, Any] | None) -> ClosedLoop | None:
    """The section from a truth manifest, or None when the run was open loop (no ``closed_loop``)."""
    answer = (manifest or {}).get("closed_loop")
    if not answer:
        return None
    out = {str(c): float(v) for c, v in (answer.get("gpu_h_out_of_service") or {}).items()}
    by_cause = pl.DataFrame(
        [(c, out[c]) for c in _causes(set(out))],
        schema={"cause": pl.String, "gpu_h": pl.Float64},
        orient="row",
    )
    repairs, failed = int(answer.get("repairs", 0)), int(answer.get("failed_repairs", 0))
    held = f" ({(repairs - failed) / repairs:.0%} held)" if repairs else ""
    lines = [
        f"{answer.get('actions_read', 0)} action(s) read from the planner; {repairs} repair(s), "
        f"{failed} did not hold{held}",
        f"{len(answer.get('lemons_cured') or {})} lemon(s) and {len(answer.get('slow_hosts_cured') or {})} "
        f"slow host(s) cured; {len(answer.get('retired') or [])} host(s) retired; "
        f"{len(answer.get('out_of_service_at_end') or [])} out of service at the end",
        f"GPU-hours out of service: {sum(out.values()):,.1f}"
        + (" (" + ", ".join(f"{c} {v:,.1f}" for c, v in by_cause.iter_rows()) + ")" if out else ""),
    ]
    jobs = answer.get("jobs") or {}
    lost = {str(c): float(v) for c, v in (jobs.get("lost_gpu_h") or {}).items() if v}
    lost_frame = pl.DataFrame(
        [(c, lost[c]) for c in _ordered(set(lost), LOST_ORDER)],
        schema={"cause": pl.String, "gpu_h": pl.Float64},
        orient="row",
    )
    by_domain = {
        str(d): {str(c): float(v) for c, v in row.items()}
        for d, row in (jobs.get("lost_by_domain") or {}).items()
    }
    ettr = pl.DataFrame(
        sorted((str(j), float(e)) for j, e in (jobs.get("ettr_by_job") or {}).items()),
        schema={"job_id": pl.String, "ettr": pl.Float64},
        orient="row",
    )
    if jobs:
        lines += _job_lines(jobs, lost_frame)
    return ClosedLoop(
        lines,
        by_cause,
        _by_domain(answer),
        _hosts(answer),
        lost_frame,
        _domain_table(by_domain, LOST_ORDER),
        ettr,
    )


def _pct(x: Any) -> str:
    return f"{float(x):.1%}" if x is not None else "-"


def _job_lines(jobs: Mapping[str, Any], lost: pl.DataFrame) -> list[str]:
    """ETTR and goodput of the run's jobs, and the GPU-hours training lost by cause."""
    total = float(lost["gpu_h"].sum()) if len(lost) else 0.0
    return [
        f"{jobs.get('jobs', 0)} job(s), {jobs.get('interruptions', 0)} interrupted by a fault: ETTR mean "
        f"{_pct(jobs.get('ettr_mean'))}, GPU-weighted {_pct(jobs.get('ettr_gpu_weighted'))}, min "
        f"{_pct(jobs.get('ettr_min'))}; fleet goodput {_pct(jobs.get('goodput'))} "
        f"({float(jobs.get('useful_gpu_h') or 0):,.0f} useful of {float(jobs.get('available_gpu_h') or 0):,.0f} "
        "available GPU-hours)",
        f"GPU-hours lost to training: {total:,.1f}"
        + (" (" + ", ".join(f"{c} {v:,.1f}" for c, v in lost.iter_rows()) + ")" if len(lost) else ""),
    ]
