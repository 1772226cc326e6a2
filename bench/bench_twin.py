"""Benchmark the closed-loop twin (not a test): the demo fleet's pages and findings per true lemon, a
Llama-3-like run beside Meta's figures, and the speed of a long meta-48k fast-forward.

    .venv/bin/python bench/bench_twin.py demo --seeds 5          # demo, 30 days, closed loop
    .venv/bin/python bench/bench_twin.py demo --twin-set sample_interval_min=60   # slow-host detector too
    .venv/bin/python bench/bench_twin.py llama3 --seeds 5        # 16,384 GPUs in one job, 54 days
    .venv/bin/python bench/bench_twin.py llama3 --twin-set checkpoint_interval_h=0.31   # a sensitivity
    .venv/bin/python bench/bench_twin.py speed --days 90         # meta-48k, one seed, timed
    .venv/bin/python bench/bench_twin.py sweep --variants 10     # one process vs one process per variant

Prints one JSON object per run. Figures are reported, never tuned: the Llama-3-like run takes the
fleet's default Llama 3 Table 5 rates and the twin's default checkpoint and restart figures.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fleetpulse.twin import run_twin, twin_settings  # noqa: E402
from fleetpulse.twin.outcome import summary  # noqa: E402
from fleetpulse.twin.settings import parse_twin_sets  # noqa: E402
from fleetpulse.twin.sweep import interval  # noqa: E402
from producers.config import FleetConfig, load_fleet_config  # noqa: E402
from streams.core.policy import load_policy  # noqa: E402

START_TS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
LLAMA3_HOSTS, LLAMA3_JOB = 3072, 2048  # Meta's 24k-GPU cluster; the Llama 3 405B job on 16,384 of its GPUs


def llama3_config() -> FleetConfig:
    """One RoCE cluster of 3,072 hosts, one 2,048-host job, the rest spares; slow hosts off (no samples in the loop)."""
    return FleetConfig.model_validate(
        {
            "name": "llama3-like",
            "clusters": [{"name": "rsc-roce", "fabric": "roce", "hosts": LLAMA3_HOSTS}],
            "install": {"arriving_fraction": 0.0},
            "slow": {"fraction": 0.0},
            "jobs": {"sizes_hosts": [LLAMA3_JOB]},
        }
    )


def runs(config: FleetConfig, seeds: int, days: float, **twin: Any) -> list[dict[str, Any]]:
    out = []
    for seed in range(1, seeds + 1):
        started = time.process_time()
        s = summary(
            run_twin(config, load_policy(None), twin_settings(twin), seed=seed, start_ts=START_TS, days=days)
        )
        s["cpu_s"] = round(time.process_time() - started, 2)
        out.append(s)
    return out


def ci(values: list[float]) -> list[float | None]:
    c = interval(values)
    assert c is not None
    return [round(c.mean, 4), None if c.half_width is None else round(c.half_width, 4)]


def demo(seeds: int, days: float, twin: dict[str, Any]) -> dict[str, Any]:
    rs = runs(load_fleet_config("demo", None), seeds, days, **twin)
    return {
        "bench": "demo closed loop",
        "twin_settings": twin,
        "slow_hosts": [r["slow_hosts"] for r in rs],
        "slow_hosts_found": [r["slow_hosts_found"] for r in rs],
        "precision": ci([r["precision"] for r in rs]),
        "pages": [r["pages"] for r in rs],
        "days": days,
        "seeds": seeds,
        "pages_per_true_incident": ci([r["pages_per_true_incident"] for r in rs]),
        "findings_per_lemon_median": [r["findings_per_lemon_median"] for r in rs],
        "findings_per_lemon_max": [r["findings_per_lemon_max"] for r in rs],
        "lemons": [r["lemons"] for r in rs],
        "lemons_found": [r["lemons_found"] for r in rs],
        "lemons_cured": [r["lemons_cured"] for r in rs],
        "rmas": [r["rmas"] for r in rs],
        "ettr_mean": ci([r["ettr_mean"] for r in rs]),
        "goodput": ci([r["goodput"] for r in rs]),
        "cpu_s": [r["cpu_s"] for r in rs],
    }


def llama3(seeds: int, days: float, twin: dict[str, Any]) -> dict[str, Any]:
    spare_pct = 100.0 * (LLAMA3_HOSTS - LLAMA3_JOB) / LLAMA3_HOSTS
    rs = runs(llama3_config(), seeds, days, spare_pct=spare_pct, **twin)
    big = [r["ettr_by_job"]["rsc-roce-job000"] for r in rs]
    return {
        "bench": "llama3-like",
        "twin_settings": twin,
        "days": days,
        "seeds": seeds,
        "job_gpus": LLAMA3_JOB * 8,
        "interruptions": ci([r["interruptions"] for r in rs]),
        "ettr_16k_job": ci(big),
        "meta_reported": {"unexpected_interruptions": 419, "ettr": "> 0.90"},
        "lost_gpu_h": {k: ci([r["lost_gpu_h"][k] for r in rs]) for k in rs[0]["lost_gpu_h"]},
        "rmas": [r["rmas"] for r in rs],
        "cpu_s": [r["cpu_s"] for r in rs],
    }


def speed(days: float) -> dict[str, Any]:
    config = load_fleet_config("meta-48k", None)
    started, wall = time.process_time(), time.perf_counter()
    s = summary(run_twin(config, load_policy(None), twin_settings(), seed=1, start_ts=START_TS, days=days))
    return {
        "bench": "meta-48k fast-forward closed loop",
        "days": days,
        "cpu_s": round(time.process_time() - started, 2),
        "wall_s": round(time.perf_counter() - wall, 2),
        "faults_reported": s["faults_reported"],
        "findings": s["findings"],
        "actions_rmas": s["rmas"],
        "ettr_mean": s["ettr_mean"],
    }


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def sweep(variants: int, days: float) -> dict[str, Any]:
    """The same grid (repeat-offender count 2..) in one process, then one process per variant (CPU of the children)."""
    values = ",".join(str(2 + i % 5) for i in range(variants))
    base = [sys.executable, "-m", "fleetpulse", "twin", "--seeds", "1", "--days", str(days)]
    cpu, wall = _child_cpu(), time.perf_counter()
    subprocess.run(
        [*base, f"--set=rules.dram_uce_repeat_gpu.count={values}"], check=True, capture_output=True
    )
    one_cpu, one_wall = _child_cpu() - cpu, time.perf_counter() - wall
    cpu, wall = _child_cpu(), time.perf_counter()
    for v in values.split(","):
        subprocess.run([*base, f"--set=rules.dram_uce_repeat_gpu.count={v}"], check=True, capture_output=True)
    many_cpu, many_wall = _child_cpu() - cpu, time.perf_counter() - wall
    return {
        "bench": "sweep",
        "variants": variants,
        "days": days,
        "one_process_cpu_s": round(one_cpu, 2),
        "one_process_wall_s": round(one_wall, 2),
        "separate_processes_cpu_s": round(many_cpu, 2),
        "separate_processes_wall_s": round(many_wall, 2),
        "cpu_ratio": round(many_cpu / one_cpu, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("what", choices=["demo", "llama3", "speed", "sweep"])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--days", type=float, default=None)
    parser.add_argument("--variants", type=int, default=10)
    parser.add_argument("--twin-set", action="append", default=[], help="KEY=VALUE of the twin's settings")
    a = parser.parse_args()
    if a.what == "demo":
        out = demo(a.seeds, a.days or 30.0, parse_twin_sets(a.twin_set))
    elif a.what == "llama3":
        out = llama3(a.seeds, a.days or 54.0, parse_twin_sets(a.twin_set))
    elif a.what == "speed":
        out = speed(a.days or 90.0)
    else:
        out = sweep(a.variants, a.days or 30.0)
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
